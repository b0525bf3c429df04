/**
 * The `timekeeper` CLI, run as a child process (bin/timekeeper, as `npx timekeeper` runs it)
 * against a real test system: every command, --json, --help, the environment, a broken
 * chain's exit code, an export verified offline, and the error when no server answers.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PoolClient } from 'pg';
import { startTestSystem, TestSystem, uniqueSessionId, eventually } from '../support';
import { asDatabaseAttacker } from '../support/db-attacker';
import { chatAnswer, fakeServer, FakeServer, protocolAnswer } from '../support/fake-services';

const BIN = path.resolve(__dirname, '../../bin/timekeeper');
const KEY = 'cli-admin-key-123';
let sys: TestSystem;
let llm: FakeServer;
let dir: string;

beforeAll(async () => {
  sys = await startTestSystem({ apiKeys: `${KEY}:admin`, config: { outboundAllowHosts: ['127.0.0.1'] }, secrets: { LLM_API_KEY: 'sk-cli' } });
  sys.tk = sys.tk.with({ apiKey: KEY });
  llm = await fakeServer((r) => {
    const system: string = JSON.parse(r.body).messages[0].content;
    return { body: chatAnswer(protocolAnswer(/task_id is "([^"]+)"/.exec(system)?.[1] ?? '?')) };
  });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-cli-'));
});
afterAll(async () => {
  await llm?.close();
  await sys?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}
function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env.PATH, HOME: process.env.HOME, TIMEKEEPER_URL: sys.baseUrl, TIMEKEEPER_API_KEY: KEY, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
const json = async (args: string[]) => {
  const r = await cli(['--json', ...args]);
  expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' });
  return JSON.parse(r.stdout);
};

/** This run's agent id: `verify --all --agent` then covers exactly this file's sessions, not every session of the test database. */
const AGENT = uniqueSessionId('cli-agent');

async function session(n = 3): Promise<string> {
  const id = uniqueSessionId('cli');
  await sys.tk.createSession({ session_id: id, agent_id: AGENT });
  for (let i = 0; i < n; i++) await sys.tk.append(id, { type: 'USER_INPUT', content: { input: `line ${i}` } });
  return id;
}

async function asAttacker(edit: (c: PoolClient) => Promise<void>) {
  await asDatabaseAttacker(sys.ownerPool, 'timeline_events', edit);
}

test('--help on the program and on every command', async () => {
  const top = await cli(['--help']);
  expect(top.code).toBe(0);
  for (const c of ['dev', 'sessions', 'timeline', 'verify', 'export', 'verify-file', 'intents', 'tasks', 'task', 'preview']) expect(top.stdout).toContain(c);
  for (const c of [['verify'], ['export'], ['task', 'create'], ['task', 'pause'], ['preview'], ['dev']]) {
    const r = await cli([...c, '--help']);
    expect({ c, code: r.code }).toEqual({ c, code: 0 });
    expect(r.stdout).toMatch(/^Usage: timekeeper /);
  }
});

test('a clear error and exit 2 when the server is not running; a refused key is exit 1', async () => {
  const down = await cli(['sessions'], { TIMEKEEPER_URL: 'http://127.0.0.1:9' });
  expect(down.code).toBe(2);
  expect(down.stderr).toContain('cannot reach Timekeeper at http://127.0.0.1:9');
  expect(down.stderr).toContain('timekeeper dev');
  const badKey = await cli(['sessions'], { TIMEKEEPER_API_KEY: 'wrong-key-999' });
  expect(badKey.code).toBe(1);
  expect(badKey.stderr).toContain('401 unauthorized');
});

test('sessions and timeline, as text and as JSON', async () => {
  const id = await session(2);
  const listed = await json(['sessions', '--agent', AGENT, '--limit', '200']);
  expect(listed.sessions.map((s: { session_id: string }) => s.session_id)).toContain(id);
  const text = await cli(['sessions', '--agent', AGENT]);
  expect(text.stdout).toMatch(new RegExp(`${id}\\s+open\\s+${AGENT}`));
  const tl = await json(['timeline', id]);
  expect(tl.events.map((e: { seq: number; type: string }) => [e.seq, e.type])).toEqual([
    [1, 'SESSION_CREATE'],
    [2, 'USER_INPUT'],
    [3, 'USER_INPUT'],
  ]);
  const tlText = await cli(['timeline', id]);
  expect(tlText.stdout).toContain('"input":"line 1"');
});

test('sessions lists newest first, as it says; --oldest the other way; a full page prints the --cursor of the next', async () => {
  const older = await session(0);
  const newer = await session(0);
  const rows = (stdout: string) => stdout.split('\n').map((l) => l.split(/\s+/)[0]).filter((x) => x === older || x === newer);
  expect(rows((await cli(['sessions', '--agent', AGENT, '--limit', '200'])).stdout)).toEqual([newer, older]);
  expect(rows((await cli(['sessions', '--agent', AGENT, '--limit', '200', '--oldest'])).stdout)).toEqual([older, newer]);
  const first = await cli(['sessions', '--agent', AGENT, '--limit', '1']);
  expect(rows(first.stdout)).toEqual([newer]);
  const cursor = /\(more: --cursor (\S+)\)/.exec(first.stdout)?.[1];
  expect(cursor).toBeDefined();
  expect(rows((await cli(['sessions', '--agent', AGENT, '--limit', '1', '--cursor', cursor!])).stdout)).toEqual([older]);
});

test('verify: ok for a good chain, non-zero exit naming the seq for a tampered one; --all covers every session (of an agent)', async () => {
  const good = await session(3);
  const bad = await session(3);
  const ok = await cli(['verify', good]);
  expect(ok.code).toBe(0);
  expect(ok.stdout).toMatch(new RegExp(`^ok\\s+${good}\\s+4 events`, 'm'));
  await asAttacker((c) => c.query(`UPDATE timeline_events SET content = '{"input":"forged"}' WHERE session_id = $1 AND seq = 3`, [bad]).then(() => undefined));
  const broken = await cli(['verify', bad]);
  expect(broken.code).toBe(1);
  expect(broken.stdout).toMatch(new RegExp(`BROKEN\\s+${bad}\\s+at seq 3: content_changed`));
  const all = await cli(['--json', 'verify', '--all', '--agent', AGENT]);
  const r = JSON.parse(all.stdout);
  const byId = new Map(r.results.map((x: { session_id: string; ok: boolean }) => [x.session_id, x.ok]));
  expect(byId.get(good)).toBe(true);
  expect(byId.get(bad)).toBe(false);
  expect(r.broken).toBeGreaterThanOrEqual(1);
  expect(all.code).toBe(1);
});

test('export writes JSON Lines that verify-file checks offline, and a forged line is caught', async () => {
  const id = await session(4);
  const file = path.join(dir, `${id}.jsonl`);
  const ex = await cli(['export', id, '-o', file]);
  expect(ex.code).toBe(0);
  const lines = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  expect(lines).toHaveLength(5);
  expect(lines[0]).toMatchObject({ session_id: id, seq: 1, type: 'SESSION_CREATE', prev_hash: null });
  expect(lines[1].prev_hash).toBe(lines[0].hash);
  const head = (await sys.tk.verify(id)).head_hash!;
  // Offline: no server at all.
  const offline = await cli(['verify-file', file, '--head', head], { TIMEKEEPER_URL: 'http://127.0.0.1:9' });
  expect(offline.code).toBe(0);
  expect(offline.stdout).toContain(`ok      ${id}  5 events, head 5 ${head}`);
  // Stdout export is the same bytes.
  expect((await cli(['export', id])).stdout).toBe(fs.readFileSync(file, 'utf8'));
  const forged = path.join(dir, 'forged.jsonl');
  fs.writeFileSync(forged, fs.readFileSync(file, 'utf8').replace('"line 2"', '"line X"'));
  const caught = await cli(['--json', 'verify-file', forged]);
  expect(caught.code).toBe(1);
  expect(JSON.parse(caught.stdout)).toMatchObject({ ok: false, first_bad_seq: 4, reason: 'content_changed' });
  const wrongHead = await cli(['verify-file', file, '--head', 'f'.repeat(64)]);
  expect(wrongHead.code).toBe(1);
});

test('intents: pending first', async () => {
  const stamp = `${process.pid}-${Date.now()}`;
  const domain = `cli${Date.now().toString(36)}`;
  await sys.tk.intents.create({ event_id: `CLI-DONE-${stamp}`, domain, action: 'finished' });
  await sys.tk.intents.transition(`CLI-DONE-${stamp}`, { status: 'done' });
  await sys.tk.intents.create({ event_id: `CLI-OPEN-${stamp}`, domain, action: 'still open' });
  const r = await json(['intents', '--domain', domain]);
  expect(r.pending).toBe(1);
  expect(r.intents.map((i: { event_id: string; status: string }) => [i.event_id, i.status])).toEqual([
    [`CLI-OPEN-${stamp}`, 'requested'],
    [`CLI-DONE-${stamp}`, 'done'],
  ]);
  const text = await cli(['intents', '--domain', domain]);
  expect(text.stdout.split('\n')[0]).toBe('1 pending');
});

test('preview a cron expression in a zone', async () => {
  const r = await json(['preview', '0 17 * * 1-5', '--tz', 'Asia/Shanghai', '--count', '3']);
  expect(r.fire_times).toHaveLength(3);
  for (const t of r.fire_times) expect(new Date(t).getUTCHours()).toBe(9);
  const text = await cli(['preview', '0 17 * * 1-5', '--tz', 'Asia/Shanghai', '--count', '2']);
  expect(text.stdout).toContain('17:00:00 Asia/Shanghai');
  const bad = await cli(['preview', '61 * * * *']);
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain('cron');
});

const ARTICLE_YAML = (id: string, agentType = '', backoff = '[60, 300, 1800]') => `task_id: ${id}
trigger:
  type: cron
  expression: "0 17 * * 1-5"
  timezone: Asia/Shanghai
agent:${agentType}
  persona: 舆情分析师
  prompt_template: 请基于今日重点话题生成一份不超过500字的摘要，包含趋势分析和异常提醒。
delivery:
  type: webhook
  url: https://your-robot.example/hook
  format: markdown
retry:
  max_attempts: 3
  backoff_seconds: ${backoff}
`;

// The article's YAML as written has no agent.type: without TASK_DEFAULT_AGENT (this system has
// none; test/e2e/tasks-api-create.test.ts has one) the CLI must say so plainly, naming the
// field, and create nothing. Its three backoff steps for three attempts are only a warning.
test("the scheduler article's YAML, verbatim, is refused naming agent.type, and nothing is created", async () => {
  const id = `digest-verbatim-${process.pid}-${Date.now().toString(36)}`;
  const file = path.join(dir, 'verbatim.yaml');
  fs.writeFileSync(file, ARTICLE_YAML(id));
  const r = await cli(['task', 'create', file]);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('400');
  expect(r.stderr).toMatch(/agent\.type/);
  const listed = (await json(['tasks', '--all'])).tasks.map((t: { task_id: string }) => t.task_id);
  expect(listed).not.toContain(id);
});

test("the article's YAML (with agent.type and two backoff steps) from a file: create, list, pause, resume, trigger", async () => {
  const id = `daily-digest-${process.pid}-${Date.now().toString(36)}`;
  const file = path.join(dir, 'daily-digest.yaml');
  fs.writeFileSync(file, ARTICLE_YAML(id, `\n  type: openai\n  base_url: ${llm.url}/v1\n  model: m\n  api_key_env: LLM_API_KEY`, '[60, 300]'));
  const created = await cli(['task', 'create', file]);
  expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
  expect(created.stdout).toContain(`created ${id}`);
  expect(created.stdout).toContain('at 17:00 on Monday to Friday');
  expect((await json(['tasks', '--all'])).tasks.map((t: { task_id: string }) => t.task_id)).toContain(id);
  expect((await json(['task', 'pause', id])).enabled).toBe(false);
  // By file as well as by id.
  expect((await json(['task', 'resume', file])).enabled).toBe(true);
  const again = await cli(['task', 'create', file]);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('409');

  // A JSON definition with a reachable agent, triggered from the CLI: the run happens.
  const jid = `cli-json-${process.pid}-${Date.now().toString(36)}`;
  const jfile = path.join(dir, 'task.json');
  fs.writeFileSync(
    jfile,
    JSON.stringify({ task_id: jid, name: 'cli json', enabled: false, trigger: { type: 'interval', every_s: 3600 }, agent: { type: 'openai', base_url: `${llm.url}/v1`, model: 'm', api_key_env: 'LLM_API_KEY', prompt_template: 'go' }, delivery: [] }),
  );
  expect((await json(['task', 'create', jfile])).task_id).toBe(jid);
  // Filters and pages (two tasks now): only the disabled one is listed as disabled; a page of one names the next.
  const disabled = (await json(['tasks', '--enabled', 'false', '--all'])).tasks.map((x: { task_id: string }) => x.task_id);
  expect(disabled).toContain(jid);
  expect(disabled).not.toContain(id);
  // Newest first by default: the next page holds an older task.
  const first = await cli(['tasks', '--limit', '1']);
  expect(first.code).toBe(0);
  const more = /\(more: --cursor (\S+), or --all\)/.exec(first.stdout);
  expect(more).not.toBeNull();
  const newest = (await json(['tasks', '--limit', '1'])).tasks[0];
  expect(first.stdout).toContain(newest.task_id);
  const second = await json(['tasks', '--limit', '1', '--cursor', more![1]]);
  expect(second.tasks).toHaveLength(1);
  expect(second.tasks[0].task_id).not.toBe(newest.task_id);
  expect(Date.parse(second.tasks[0].created_at)).toBeLessThanOrEqual(Date.parse(newest.created_at));
  // By task id: the cursor is the last id, and the next page starts after it.
  const byId = await cli(['tasks', '--limit', '1', '--order', 'id']);
  const afterId = /\(more: --cursor (\S+), or --all\)/.exec(byId.stdout)![1];
  const nextById = await json(['tasks', '--limit', '1', '--cursor', afterId]);
  expect(nextById.tasks[0].task_id > afterId).toBe(true);
  const t = await json(['task', 'trigger', jid]);
  expect(t.run_id).toMatch(new RegExp(`^run/${jid}/manual/`));
  await eventually(async () => (await sys.tk.call('getRun', { params: { id: t.run_id } })).body.status === 'success');
});

test('a bad definition file is a clear error', async () => {
  const file = path.join(dir, 'broken.yaml');
  fs.writeFileSync(file, 'task_id: [unclosed');
  const r = await cli(['task', 'create', file]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('neither valid JSON nor YAML');
  const missing = await cli(['task', 'create', path.join(dir, 'nope.yaml')]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('cannot read');
});
