/**
 * `npm run test:openclaw`: the plugin against the real OpenClaw (2026.9.6, on Node 26, both
 * cached in ~/.cache/timekeeper/openclaw and installed there when missing), a local
 * OpenAI-compatible model server, and a real Timekeeper (Temporal dev server + PostgreSQL, as
 * the jest suite starts them). Two runs:
 *   1. one `openclaw agent --local` turn with a tool call, then the session is ended: the
 *      timeline holds SESSION_CREATE, USER_INPUT, TOOL_CALL, TOOL_RESULT, LLM_RESPONSE,
 *      SESSION_END and verifies;
 *   2. the same, but Timekeeper's API is stopped while the model is answering and started
 *      again after the turn: the outbox delivers every event exactly once.
 * Kept out of `npm test`: see README "OpenClaw plugin".
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../api/app';
import { loadKeyStore } from '../../api/auth';
import { TimekeeperClient } from '../../api/client';
import globalSetup from '../support/global-setup';
import globalTeardown from '../support/global-teardown';
import { startTestSystem } from '../support/system';
import { startMockLlm } from './mock-llm';

const ROOT = path.resolve(__dirname, '../..');
const PLUGIN = path.join(ROOT, 'integrations/openclaw');
const CACHE = process.env.OPENCLAW_CACHE_DIR || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'timekeeper/openclaw');
const OPENCLAW_VERSION = '2026.9.6';
const GW_KEY = 'gw-key-openclaw-e2e';
const AUD_KEY = 'aud-key-openclaw-e2e';

function log(msg: string) {
  console.log(`[test:openclaw] ${msg}`);
}

/** Node 26 and openclaw in the cache folder, installed once. */
function ensureOpenClaw(): { nodeBin: string; openclaw: string } {
  const nodeBin = path.join(CACHE, 'node_modules/node/bin');
  const openclaw = path.join(CACHE, 'node_modules/openclaw/openclaw.mjs');
  fs.mkdirSync(CACHE, { recursive: true });
  if (!fs.existsSync(path.join(CACHE, 'package.json'))) fs.writeFileSync(path.join(CACHE, 'package.json'), '{"name":"tk-openclaw-cache","private":true}\n');
  const npm = (args: string[], env: NodeJS.ProcessEnv = process.env) => execFileSync('npm', args, { cwd: CACHE, stdio: 'inherit', env });
  if (!fs.existsSync(path.join(nodeBin, 'node'))) {
    log(`installing node@26 into ${CACHE}`);
    npm(['install', '--no-audit', '--no-fund', 'node@26']);
  }
  const pkg = path.join(CACHE, 'node_modules/openclaw/package.json');
  if (!fs.existsSync(pkg) || JSON.parse(fs.readFileSync(pkg, 'utf8')).version !== OPENCLAW_VERSION) {
    log(`installing openclaw@${OPENCLAW_VERSION} into ${CACHE} (about 650 MB, once)`);
    npm(['install', '--no-audit', '--no-fund', `openclaw@${OPENCLAW_VERSION}`], { ...process.env, PATH: `${nodeBin}:${process.env.PATH}` });
  }
  return { nodeBin, openclaw };
}

/** Timekeeper's HTTP API on a fixed port that can be stopped and started again (the worker and databases keep running). */
async function startApi(deps: Parameters<typeof createApp>[0], port = 0) {
  let server: http.Server | undefined;
  const listen = async (p: number) => {
    server = http.createServer(createApp(deps));
    await new Promise<void>((r) => server!.listen(p, '127.0.0.1', () => r()));
    return (server.address() as AddressInfo).port;
  };
  const bound = await listen(port);
  return {
    url: `http://127.0.0.1:${bound}`,
    async stop() {
      const s = server;
      server = undefined;
      if (s) await new Promise<void>((r) => (s.close(() => r()), s.closeAllConnections()));
    },
    async start() {
      if (!server) await listen(bound);
    },
  };
}

function runOpenClaw(env: NodeJS.ProcessEnv, args: string[], nodeBin: string, openclaw: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(path.join(nodeBin, 'node'), [openclaw, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    const t = setTimeout(() => p.kill('SIGKILL'), 240_000);
    p.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, out });
    });
  });
}

async function main() {
  const t0 = Date.now();
  const { nodeBin, openclaw } = ensureOpenClaw();
  log(`node ${execFileSync(path.join(nodeBin, 'node'), ['--version']).toString().trim()}, ${execFileSync(path.join(nodeBin, 'node'), [openclaw, '--version']).toString().trim()}`);
  execFileSync(process.execPath, [path.join(PLUGIN, 'build.mjs')], { stdio: 'inherit' });

  await globalSetup({});
  const sys = await startTestSystem({ apiKeys: `${GW_KEY}:gateway,${AUD_KEY}:auditor|agent` });
  const api = await startApi({ client: sys.client, pool: sys.pool, config: sys.config, keys: loadKeyStore(`${GW_KEY}:gateway,${AUD_KEY}:auditor|agent`) });
  const auditor = new TimekeeperClient({ baseUrl: api.url, apiKey: AUD_KEY });
  const mock = await startMockLlm({
    tool: (tools) => (tools.includes('read') ? { name: 'read', args: { path: 'hello.txt' } } : { name: tools[0], args: {} }),
    finalText: 'The file says hello.',
  });
  let failures = 0;
  try {
    for (const scenario of ['plain', 'timekeeper-down'] as const) {
      const home = fs.mkdtempSync(path.join(os.tmpdir(), `tk-openclaw-${scenario}-`));
      const workspace = path.join(home, 'workspace');
      fs.mkdirSync(workspace, { recursive: true });
      fs.writeFileSync(path.join(workspace, 'hello.txt'), 'hello from the workspace\n');
      const outboxDir = path.join(home, 'outbox');
      const stateDir = path.join(home, '.openclaw');
      fs.mkdirSync(stateDir, { recursive: true });
      const config = {
        agents: { defaults: { model: { primary: 'mock/mock-model' }, workspace } },
        models: {
          mode: 'merge',
          providers: {
            mock: {
              baseUrl: mock.url,
              apiKey: 'sk-mock',
              api: 'openai-completions',
              models: [{ id: 'mock-model', name: 'Mock', reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 4096 }],
            },
          },
        },
        plugins: {
          load: { paths: [PLUGIN] },
          entries: { timekeeper: { enabled: true, hooks: { allowConversationAccess: true }, config: { url: api.url, apiKey: GW_KEY, outboxDir, retryBaseMs: 200, retryMaxMs: 1000, flushOnStopMs: 3000 } } },
        },
      };
      fs.writeFileSync(path.join(stateDir, 'openclaw.json'), JSON.stringify(config, null, 2));
      const env = { ...process.env, HOME: home, OPENCLAW_STATE_DIR: stateDir, OPENCLAW_CONFIG_PATH: path.join(stateDir, 'openclaw.json'), PATH: `${nodeBin}:${process.env.PATH}`, NO_COLOR: '1' };
      const sessionId = randomUUID();
      mock.requests.length = 0;
      mock.onRequest = undefined;
      if (scenario === 'timekeeper-down')
        mock.onRequest = async (n) => {
          if (n === 1) {
            log('stopping Timekeeper API during the turn');
            await api.stop();
          }
        };
      log(`${scenario}: openclaw agent --local --session-id ${sessionId}`);
      const turn = await runOpenClaw(env, ['agent', '--local', '--session-id', sessionId, '--message', 'Read hello.txt and tell me what it says.'], nodeBin, openclaw);
      log(`${scenario}: openclaw exited ${turn.code}; model requests: ${JSON.stringify(mock.requests.map((r) => ({ tools: r.tools.length, toolResult: r.hasToolResult })))}`);
      console.log(turn.out.trim().split('\n').map((l) => `    | ${l}`).join('\n'));
      if (scenario === 'timekeeper-down') {
        const status = JSON.parse(fs.readFileSync(path.join(outboxDir, 'status.json'), 'utf8'));
        log(`outbox while Timekeeper is down: pending ${status.pending}, delivered ${status.delivered}, last error ${status.last_error}`);
        await api.start();
        log('Timekeeper API started again');
      }
      // `openclaw agent --local` has no way to end a session (session_end fires on a Gateway's
      // /new, /reset, idle or daily reset): a second turn in the same session is the next process
      // start, which replays the outbox journal.
      log(`${scenario}: second turn (a new process; replays the outbox)`);
      const end = await runOpenClaw(env, ['agent', '--local', '--session-id', sessionId, '--message', '/reset'], nodeBin, openclaw);
      console.log(end.out.trim().split('\n').map((l) => `    | ${l}`).join('\n'));
      const status = JSON.parse(fs.readFileSync(path.join(outboxDir, 'status.json'), 'utf8'));
      log(`${scenario}: outbox status ${JSON.stringify({ pending: status.pending, delivered: status.delivered, rejected: status.rejected, dropped: status.dropped, retries: status.retries })}`);
      const events = await auditor.events(sessionId, { limit: 100 });
      const types = events.events.map((e) => e.type);
      log(`${scenario}: timeline ${sessionId}: ${types.join(', ')}`);
      const verify = await auditor.verify(sessionId).catch((e: Error) => ({ ok: false, error: e.message }));
      log(`${scenario}: verify ${JSON.stringify(verify)}`);
      const expected = ['SESSION_CREATE', 'USER_INPUT', 'TOOL_CALL', 'TOOL_RESULT', 'LLM_RESPONSE', 'USER_INPUT', 'LLM_RESPONSE'];
      const keys = events.events.map((e) => e.idempotency_key).filter(Boolean);
      const ok = JSON.stringify(types) === JSON.stringify(expected) && (verify as { ok?: boolean }).ok === true && new Set(keys).size === keys.length;
      if (!types.includes('SESSION_END')) log(`${scenario}: no SESSION_END: OpenClaw emits session_end only on a Gateway session reset (not reached by this script)`);
      if (!ok) failures++;
      log(`${scenario}: ${ok ? 'PASS' : 'FAIL'} (expected ${expected.join(', ')})`);
    }
  } finally {
    await mock.close();
    await api.stop();
    await sys.stop();
    await globalTeardown();
  }
  log(`${2 - failures} passed, ${failures} failed in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  process.exitCode = failures ? 1 : 0;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
