/**
 * `npm run test:openclaw`: the plugin against the real OpenClaw (2026.9.6, on Node 26, both
 * cached in ~/.cache/timekeeper/openclaw and installed there when missing), a local
 * OpenAI-compatible model server, and a real Timekeeper (Temporal dev server + PostgreSQL, as
 * the jest suite starts them). Every run sets the plugin up exactly as integrations/openclaw/README.md
 * says, with OpenClaw's own commands (`openclaw plugins install --link … --force
 * --accept-capabilities`, `openclaw config set plugins.entries.timekeeper.…`, `openclaw plugins
 * enable timekeeper`) on top of an OpenClaw config holding only the Gateway, the agent and the mock
 * model (what a user already has). Each Gateway run starts a real OpenClaw Gateway (loopback, token
 * auth, the mock model as its only provider),
 * drives one turn with a tool call through it (`openclaw agent --session-key …`), ends the
 * session with the Gateway's `sessions.reset` RPC (OpenClaw emits session_end with reason
 * `reset`), waits for the outbox to be empty (status.json), and checks the timeline:
 *   1. gateway: SESSION_CREATE, USER_INPUT, TOOL_CALL, TOOL_RESULT, LLM_RESPONSE, SESSION_END
 *      (reason openclaw:reset), verifying, every idempotency key once; then a second turn on the
 *      same session key lands in a new timeline (OpenClaw may reset in place, keeping the
 *      sessionId) with SESSION_CREATE, USER_INPUT, TOOL_CALL, TOOL_RESULT, LLM_RESPONSE, and
 *      SESSION_END with reason openclaw:shutdown once the Gateway is stopped;
 *   2. gateway-timekeeper-down: the same with Timekeeper's API stopped from the first model
 *      request until after the session has ended: the outbox holds the events, retries, and
 *      delivers each exactly once, in order, when the API is back;
 *   3. cli-local: one `openclaw agent --local` turn (no Gateway): the outbox is empty when the
 *      process has exited, so the timeline has the turn (the CLI cannot end a session:
 *      session_end comes from the Gateway's session lifecycle and the reply pipeline's /new, /reset);
 *   4. cli-local-timekeeper-down: a `--local` turn with Timekeeper's API stopped: the process logs
 *      at exit how many events stay queued and where, `openclaw timekeeper status` shows them; the
 *      next `--local` run (API back) delivers them along with its own; status.json's counters add
 *      up across both processes.
 * In every run each event but SESSION_CREATE carries occurred_at (the hook's time), never after
 * its ts; events buffered through an outage keep their real times (occurred_at before the API
 * came back, ts after it).
 * OpenClaw emits llm_output after the tool loop, hence LLM_RESPONSE after TOOL_RESULT.
 * OPENCLAW_E2E_ONLY=gateway,cli-local runs a subset. Kept out of `npm test`: see README "OpenClaw plugin".
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import net, { type AddressInfo } from 'node:net';
import { createApp } from '../../api/app';
import { loadKeyStore } from '../../api/auth';
import { TimekeeperClient } from '../../sdk/client';
import globalSetup from '../support/global-setup';
import globalTeardown from '../support/global-teardown';
import { startTestSystem, sleep } from '../support';
import { startMockLlm } from './mock-llm';

const ROOT = path.resolve(__dirname, '../..');
const PLUGIN = path.join(ROOT, 'integrations/openclaw');
const CACHE = process.env.OPENCLAW_CACHE_DIR || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'timekeeper/openclaw');
const OPENCLAW_VERSION = '2026.9.6';
const GW_KEY = 'gw-key-openclaw-e2e';
const AUD_KEY = 'aud-key-openclaw-e2e';
/**
 * How long one openclaw command or Gateway start may take before it is killed: a safety net, not
 * an assertion. Warm and unloaded a turn takes seconds; on a loaded 2-core machine (load
 * average 30) a --local turn took over 120 s, a Gateway start 80-100 s. OPENCLAW_E2E_TIMEOUT_S overrides.
 */
const COMMAND_TIMEOUT_MS = Number(process.env.OPENCLAW_E2E_TIMEOUT_S ?? 300) * 1000;

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
    const p = spawn(path.join(nodeBin, 'node'), [openclaw, ...args], { env, cwd: env.HOME, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    const t = setTimeout(() => {
      log(`openclaw ${args[0]} still running after ${COMMAND_TIMEOUT_MS / 1000} s: killed`);
      p.kill('SIGKILL');
    }, COMMAND_TIMEOUT_MS);
    // 'exit', not 'close': a child the CLI leaves behind may hold its stdout open.
    p.on('exit', (code) => {
      clearTimeout(t);
      setTimeout(() => resolve({ code, out }), 100);
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** `openclaw gateway run` in the background; resolves once it logs "ready". */
async function startGateway(env: NodeJS.ProcessEnv, nodeBin: string, openclaw: string, logFile: string) {
  const p = spawn(path.join(nodeBin, 'node'), [openclaw, 'gateway', 'run'], { env, cwd: env.HOME, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const onData = (d: Buffer) => {
    out += d;
    fs.appendFileSync(logFile, d);
  };
  p.stdout.on('data', onData);
  p.stderr.on('data', onData);
  const exited = new Promise<number | null>((r) => p.on('close', (code) => r(code)));
  const deadline = Date.now() + COMMAND_TIMEOUT_MS;
  while (!/\[gateway\] ready/.test(out)) {
    if (p.exitCode !== null || Date.now() > deadline) throw new Error(`the Gateway did not start (exit ${p.exitCode}); log ${logFile}:\n${out.slice(-3000)}`);
    await sleep(250);
  }
  return {
    log: () => out,
    async stop() {
      if (p.exitCode === null) p.kill('SIGTERM');
      const t = setTimeout(() => p.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}


interface Status {
  pending: number;
  delivered: number;
  rejected: number;
  dropped: number;
  retries: number;
  last_error: string | null;
}
function readStatus(outboxDir: string): Status | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(outboxDir, 'status.json'), 'utf8')) as Status;
  } catch {
    return undefined;
  }
}
/** Polls status.json until the outbox has delivered at least `delivered` events and holds none. */
async function waitForOutbox(outboxDir: string, delivered: number, timeoutMs: number): Promise<Status | undefined> {
  const deadline = Date.now() + timeoutMs;
  let st = readStatus(outboxDir);
  while (Date.now() < deadline) {
    st = readStatus(outboxDir);
    if (st && st.pending === 0 && st.delivered >= delivered) return st;
    await sleep(200);
  }
  return st;
}
const brief = (st: Status | undefined) => (st ? JSON.stringify({ pending: st.pending, delivered: st.delivered, rejected: st.rejected, dropped: st.dropped, retries: st.retries }) : 'no status.json');
const indent = (out: string) => out.trim().split('\n').slice(-25).map((l) => `    | ${l}`).join('\n');

const SCENARIOS = ['gateway', 'gateway-timekeeper-down', 'cli-local', 'cli-local-timekeeper-down'] as const;
type Scenario = (typeof SCENARIOS)[number];

async function main() {
  const t0 = Date.now();
  const { nodeBin, openclaw } = ensureOpenClaw();
  log(`node ${execFileSync(path.join(nodeBin, 'node'), ['--version']).toString().trim()}, ${execFileSync(path.join(nodeBin, 'node'), [openclaw, '--version']).toString().trim()}`);
  execFileSync(process.execPath, [path.join(PLUGIN, 'build.mjs')], { stdio: 'inherit' });
  const only = process.env.OPENCLAW_E2E_ONLY?.split(',');
  const scenarios = SCENARIOS.filter((s) => !only || only.includes(s));

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
    for (const scenario of scenarios) if (!(await runScenario(scenario))) failures++;
  } finally {
    await mock.close();
    await api.stop();
    await sys.stop();
    await globalTeardown();
  }
  log(`${scenarios.length - failures} passed, ${failures} failed in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  process.exitCode = failures ? 1 : 0;

  async function runScenario(scenario: Scenario): Promise<boolean> {
    const problems: string[] = [];
    const home = fs.mkdtempSync(path.join(os.tmpdir(), `tk-openclaw-${scenario}-`));
    const workspace = path.join(home, 'workspace');
    fs.mkdirSync(workspace, { recursive: true });
    fs.writeFileSync(path.join(workspace, 'hello.txt'), 'hello from the workspace\n');
    const outboxDir = path.join(home, 'outbox');
    const stateDir = path.join(home, '.openclaw');
    fs.mkdirSync(stateDir, { recursive: true });
    const gatewayPort = await freePort();
    const config = {
      gateway: { mode: 'local', port: gatewayPort, bind: 'loopback', auth: { mode: 'token', token: `tok-${randomUUID()}` } },
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
    };
    // The user's OpenClaw config before the plugin: no plugin entry at all.
    fs.writeFileSync(path.join(stateDir, 'openclaw.json'), JSON.stringify(config, null, 2));
    const env = { ...process.env, HOME: home, OPENCLAW_STATE_DIR: stateDir, OPENCLAW_CONFIG_PATH: path.join(stateDir, 'openclaw.json'), PATH: `${nodeBin}:${process.env.PATH}`, NO_COLOR: '1' };
    const oc = (args: string[]) => runOpenClaw(env, args, nodeBin, openclaw);
    // integrations/openclaw/README.md, "Set up", command for command (the outbox folder and the
    // short retry waits are this test's own settings, through the same `config set`).
    const setup: string[][] = [
      ['plugins', 'install', '--link', PLUGIN, '--force', '--accept-capabilities'],
      ['config', 'set', 'plugins.entries.timekeeper.config.url', api.url],
      ['config', 'set', 'plugins.entries.timekeeper.config.apiKey', GW_KEY],
      ['config', 'set', 'plugins.entries.timekeeper.hooks.allowConversationAccess', 'true'],
      ['config', 'set', '--batch-json', JSON.stringify([
        { path: 'plugins.entries.timekeeper.config.outboxDir', value: outboxDir },
        { path: 'plugins.entries.timekeeper.config.retryBaseMs', value: 200 },
        { path: 'plugins.entries.timekeeper.config.retryMaxMs', value: 1000 },
      ])],
      ['plugins', 'enable', 'timekeeper'],
    ];
    for (const args of setup) {
      const r = await oc(args);
      if (r.code !== 0) {
        console.log(indent(r.out));
        throw new Error(`openclaw ${args.slice(0, 2).join(' ')} exited ${r.code}`);
      }
    }
    const entry = (JSON.parse(fs.readFileSync(path.join(stateDir, 'openclaw.json'), 'utf8')) as { plugins?: { entries?: { timekeeper?: unknown } } }).plugins?.entries?.timekeeper;
    log(`${scenario}: plugin set up with ${setup.length} openclaw commands: ${JSON.stringify(entry)}`);
    mock.requests.length = 0;
    mock.onRequest = undefined;
    const down = scenario === 'gateway-timekeeper-down';
    if (down)
      mock.onRequest = async (n) => {
        if (n === 1) {
          log(`${scenario}: first model request: stopping Timekeeper's API`);
          await api.stop();
        }
      };
    const message = 'Read hello.txt and tell me what it says.';
    let sessionId: string;
    let expected: string[];
    let after: string | undefined;
    let generations: Record<string, string> = {};
    let gateway: Awaited<ReturnType<typeof startGateway>> | undefined;
    /** When Timekeeper's API came back after an outage: events buffered through it have occurred_at before, ts after. */
    let restartedAt: number | undefined;
    /** A second timeline this run checks (the next --local run's own turn). */
    let second: string | undefined;
    try {
      if (scenario === 'cli-local-timekeeper-down') {
        sessionId = randomUUID();
        await api.stop();
        log(`${scenario}: Timekeeper's API stopped; openclaw agent --local --session-id ${sessionId}`);
        const turn = await oc(['agent', '--local', '--session-id', sessionId, '--message', message]);
        log(`${scenario}: openclaw exited ${turn.code}; model requests ${mock.requests.length}`);
        const exitLine = /\[timekeeper\] exiting with (\d+) event\(s\) not yet delivered[^\n]*/.exec(turn.out);
        log(`${scenario}: its last words: ${exitLine?.[0] ?? '(no exit line)'}`);
        if (turn.code !== 0) problems.push(`openclaw agent --local exited ${turn.code}`);
        const atExit = readStatus(outboxDir);
        log(`${scenario}: outbox when the process had exited: ${brief(atExit)}`);
        if (!exitLine) problems.push('the process exited with events queued but logged no line saying so');
        else if (Number(exitLine[1]) !== atExit?.pending) problems.push(`the exit line says ${exitLine[1]} queued, status.json ${atExit?.pending}`);
        if (!atExit || atExit.pending !== 5 || atExit.delivered !== 0) problems.push('expected 5 events pending and none delivered after a run with Timekeeper down');
        // The depth as the user asks OpenClaw for it (the plugin's own command; `plugins list` is manifest metadata only).
        const shown = await oc(['timekeeper', 'status', '--json']);
        const at = shown.out.indexOf('{\n  "outbox_dir"');
        let reported: { outbox_dir?: string; statuses?: Status[] } = {};
        try {
          reported = at >= 0 ? JSON.parse(shown.out.slice(at, shown.out.indexOf('\n}', at) + 2)) : {};
        } catch {
          /* reported as a problem below */
        }
        log(`${scenario}: openclaw timekeeper status --json exited ${shown.code}: ${reported.outbox_dir}, pending ${reported.statuses?.map((x) => x.pending).join(', ')}`);
        if (shown.code !== 0 || reported.outbox_dir !== outboxDir || reported.statuses?.[0]?.pending !== atExit?.pending) {
          console.log(indent(shown.out));
          problems.push('openclaw timekeeper status does not show the outbox depth');
        }
        await api.start();
        restartedAt = Date.now();
        second = randomUUID();
        log(`${scenario}: Timekeeper's API started again; the next run: openclaw agent --local --session-id ${second}`);
        const next = await oc(['agent', '--local', '--session-id', second, '--message', message]);
        log(`${scenario}: the next run exited ${next.code}`);
        if (next.code !== 0) {
          console.log(indent(next.out));
          problems.push(`the next openclaw agent --local exited ${next.code}`);
        }
        const after = readStatus(outboxDir);
        log(`${scenario}: outbox when the next process had exited: ${brief(after)} (enqueued ${(after as { enqueued?: number } | undefined)?.enqueued})`);
        // Both processes' events, counted by the folder: 5 + 5.
        if (!after || after.pending !== 0 || after.delivered !== 10 || (after as { enqueued?: number }).enqueued !== 10) problems.push('status.json does not count both processes (expected 10 enqueued, 10 delivered, 0 pending)');
        if (after && after.retries === 0) problems.push('status.json lost the first process\'s retries');
        expected = ['SESSION_CREATE', 'USER_INPUT', 'TOOL_CALL', 'TOOL_RESULT', 'LLM_RESPONSE'];
      } else if (scenario === 'cli-local') {
        sessionId = randomUUID();
        log(`${scenario}: openclaw agent --local --session-id ${sessionId}`);
        const turn = await oc(['agent', '--local', '--session-id', sessionId, '--message', message]);
        log(`${scenario}: openclaw exited ${turn.code}; model requests ${mock.requests.length}`);
        console.log(indent(turn.out));
        if (turn.code !== 0) problems.push(`openclaw agent --local exited ${turn.code}`);
        const atExit = readStatus(outboxDir);
        log(`${scenario}: outbox when the process had exited: ${brief(atExit)}`);
        if (!atExit || atExit.pending !== 0) problems.push('the CLI process exited before the outbox was empty');
        expected = ['SESSION_CREATE', 'USER_INPUT', 'TOOL_CALL', 'TOOL_RESULT', 'LLM_RESPONSE'];
      } else {
        const t = Date.now();
        gateway = await startGateway(env, nodeBin, openclaw, path.join(home, 'gateway.log'));
        log(`${scenario}: Gateway ready on 127.0.0.1:${gatewayPort} in ${((Date.now() - t) / 1000).toFixed(1)} s`);
        const sessionKey = `agent:main:tk-e2e-${randomUUID()}`;
        log(`${scenario}: openclaw agent --session-key ${sessionKey} (through the Gateway)`);
        const turn = await oc(['agent', '--session-key', sessionKey, '--message', message, '--json']);
        const m = /"sessionId":\s*"([^"]+)"/.exec(turn.out);
        log(`${scenario}: openclaw agent exited ${turn.code}; model requests ${mock.requests.length}; OpenClaw sessionId ${m?.[1]}`);
        if (turn.code !== 0 || !m) {
          console.log(indent(turn.out));
          throw new Error('the Gateway turn failed');
        }
        sessionId = m[1];
        log(`${scenario}: openclaw gateway call sessions.reset {key: ${sessionKey}}`);
        const reset = await oc(['gateway', 'call', 'sessions.reset', '--params', JSON.stringify({ key: sessionKey }), '--json']);
        const next = /"sessionId":\s*"([^"]+)"/.exec(reset.out)?.[1];
        log(`${scenario}: sessions.reset exited ${reset.code}; the key's new sessionId ${next}`);
        if (reset.code !== 0) {
          console.log(indent(reset.out));
          problems.push(`sessions.reset exited ${reset.code}`);
        }
        expected = ['SESSION_CREATE', 'USER_INPUT', 'TOOL_CALL', 'TOOL_RESULT', 'LLM_RESPONSE', 'SESSION_END'];
        // A turn after the reset: OpenClaw may keep the sessionId (reset in place); the plugin must
        // record it in a new timeline rather than append to the ended one.
        const turn2 = await oc(['agent', '--session-key', sessionKey, '--message', 'Read hello.txt once more.', '--json']);
        after = /"sessionId":\s*"([^"]+)"/.exec(turn2.out)?.[1];
        log(`${scenario}: turn after the reset exited ${turn2.code}; OpenClaw sessionId ${after}${after === sessionId ? ' (the same: reset in place)' : ''}`);
        if (turn2.code !== 0 || !after) {
          console.log(indent(turn2.out));
          problems.push('the turn after the reset failed');
        }
        if (down) {
          await sleep(1500); // the outbox keeps retrying against the stopped API
          const st = readStatus(outboxDir);
          log(`${scenario}: outbox while Timekeeper is down: ${brief(st)}, last error ${st?.last_error}`);
          if (!st || st.pending === 0) problems.push('nothing was pending while Timekeeper was down');
          await api.start();
          restartedAt = Date.now();
          log(`${scenario}: Timekeeper's API started again`);
        }
      }
      let st = await waitForOutbox(outboxDir, expected.length + (after ? 5 : 0), 30_000);
      log(`${scenario}: outbox ${brief(st)}`);
      if (!st || st.pending !== 0) problems.push('the outbox did not empty within 30 s');
      // Which timeline the turn after the reset went to (read before the Gateway's shutdown ends it and moves on).
      try {
        generations = JSON.parse(fs.readFileSync(path.join(outboxDir, 'timelines.json'), 'utf8'));
      } catch {
        /* no session went on after an end */
      }
      if (gateway) {
        const code = await gateway.stop();
        log(`${scenario}: Gateway stopped (exit ${code})`);
        gateway = undefined;
        st = readStatus(outboxDir);
        log(`${scenario}: outbox after the Gateway stopped (its session_end shutdown delivered on stop): ${brief(st)}`);
        if (!st || st.pending !== 0) problems.push('the Gateway stopped with events still in the outbox');
      }
      if (st && (st.rejected || st.dropped)) problems.push(`${st.rejected} rejected, ${st.dropped} dropped`);
    } finally {
      if (gateway) await gateway.stop();
    }
    const events = await auditor.events(sessionId, { limit: 100 });
    const types = events.events.map((e) => e.type);
    log(`${scenario}: timeline ${sessionId}: ${types.join(', ')}`);
    if (JSON.stringify(types) !== JSON.stringify(expected)) problems.push(`expected ${expected.join(', ')}`);
    const endEv = events.events.find((e) => e.type === 'SESSION_END');
    if (endEv) {
      log(`${scenario}: SESSION_END content ${JSON.stringify(endEv.content)}`);
      if ((endEv.content as { reason?: string } | null)?.reason !== 'openclaw:reset') problems.push('SESSION_END does not carry reason openclaw:reset');
    }
    const tool = events.events.find((e) => e.type === 'TOOL_CALL');
    if (tool && (tool.content as { tool_name?: string }).tool_name !== 'read') problems.push('TOOL_CALL is not the read tool');
    const keys = events.events.map((e) => e.idempotency_key).filter(Boolean);
    if (new Set(keys).size !== keys.length) problems.push('an idempotency key appears twice');
    checkTimes(sessionId, events.events);
    if (second) {
      const ev2 = await auditor.events(second, { limit: 100 });
      log(`${scenario}: the next run's timeline ${second}: ${ev2.events.map((e) => e.type).join(', ')}`);
      if (JSON.stringify(ev2.events.map((e) => e.type)) !== JSON.stringify(expected)) problems.push(`the next run: expected ${expected.join(', ')}`);
      if (ev2.events.some((e) => e.occurred_at !== null && e.occurred_at < restartedAt!)) problems.push("the next run's events have times from before it");
      // The backlog left with the next run (per-session lanes: not necessarily before its own events).
      if (events.events.some((e) => e.ts < restartedAt!)) problems.push('an event of the run with Timekeeper down was stored before the API came back');
      const v = await auditor.verify(second).catch((e: Error) => ({ ok: false, error: e.message }));
      if ((v as { ok?: boolean }).ok !== true) problems.push(`verify of ${second} is not ok`);
    }
    const verify = await auditor.verify(sessionId).catch((e: Error) => ({ ok: false, error: e.message }));
    log(`${scenario}: verify ${JSON.stringify(verify)}`);
    if ((verify as { ok?: boolean }).ok !== true) problems.push('verify is not ok');
    if (after) {
      const next = after === sessionId ? `${after}:${generations[after]}` : after;
      const ev2 = await auditor.events(next, { limit: 100 }).catch((e: Error) => ({ events: [], error: e.message }));
      const types2 = ev2.events.map((e) => e.type);
      log(`${scenario}: timeline after the reset ${next}: ${types2.join(', ')}`);
      // Stopping the Gateway ends its active sessions: session_end with reason shutdown.
      const expected2 = ['SESSION_CREATE', 'USER_INPUT', 'TOOL_CALL', 'TOOL_RESULT', 'LLM_RESPONSE', 'SESSION_END'];
      if (JSON.stringify(types2) !== JSON.stringify(expected2)) problems.push(`after the reset: expected ${expected2.join(', ')}`);
      const end2 = ev2.events.find((e) => e.type === 'SESSION_END');
      if (end2) log(`${scenario}: its SESSION_END content ${JSON.stringify(end2.content)}`);
      if ((end2?.content as { reason?: string } | undefined)?.reason !== 'openclaw:shutdown') problems.push('the second timeline does not end with reason openclaw:shutdown');
      const v2 = await auditor.verify(next).catch((e: Error) => ({ ok: false, error: e.message }));
      if ((v2 as { ok?: boolean }).ok !== true) problems.push(`verify of ${next} is not ok`);
    }
    log(`${scenario}: ${problems.length ? `FAIL: ${problems.join('; ')}` : 'PASS'}`);
    return problems.length === 0;

    /** Every event but SESSION_CREATE has the hook's time, never after its ts; through an outage the buffered ones keep it. */
    function checkTimes(id: string, evs: { type: string; seq: number; ts: number; occurred_at: number | null }[]) {
      const late = (e: { ts: number; occurred_at: number | null }) => (e.occurred_at === null ? 'none' : `${((e.ts - e.occurred_at) / 1000).toFixed(3)} s`);
      log(`${scenario}: ${id} stored after it happened by: ${evs.map((e) => `${e.type} ${late(e)}`).join(', ')}`);
      for (const e of evs) {
        if (e.type === 'SESSION_CREATE') continue;
        if (e.occurred_at === null) problems.push(`${e.type} (seq ${e.seq}) has no occurred_at`);
        else if (e.occurred_at > e.ts) problems.push(`${e.type} (seq ${e.seq}) occurred_at is after its ts`);
      }
      if (restartedAt !== undefined) {
        const buffered = evs.filter((e) => e.ts >= restartedAt! && e.type !== 'SESSION_CREATE');
        log(`${scenario}: ${buffered.length} event(s) stored after the API came back at ${new Date(restartedAt).toISOString()}; their occurred_at: ${buffered.map((e) => (e.occurred_at === null ? 'none' : new Date(e.occurred_at).toISOString())).join(', ')}`);
        if (buffered.length === 0) problems.push('no event was buffered through the outage');
        if (buffered.some((e) => e.occurred_at === null || e.occurred_at >= restartedAt!)) problems.push('an event buffered through the outage lost its real time (occurred_at not before the API came back)');
      }
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
