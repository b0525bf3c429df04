/**
 * OML's workspace routes and read-only mode over HTTP: STATE.md raw and sanitised, artifacts
 * listed and served (Markdown rendered, other files downloaded), no path, encoding or link
 * trick reaching outside ARTIFACTS_DIR; and DB_READ_ONLY refusing every write while reads work.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { refusal, startTestSystem, TestSystem } from '../support';

const SECRET = 'TOP-SECRET-outside-the-artifacts-folder';
let ws: string;
let sys: TestSystem;
let ro: TestSystem;

beforeAll(async () => {
  ws = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-ws-'));
  const art = path.join(ws, 'ARTIFACTS');
  fs.mkdirSync(art);
  fs.mkdirSync(path.join(art, 'sub'));
  fs.writeFileSync(path.join(ws, 'STATE.md'), '# Goals\n\n- ship intents\n\n<script>alert(1)</script>\n[click](javascript:alert(2))\n<img src=x onerror="alert(3)">\n');
  fs.writeFileSync(path.join(ws, 'secret.txt'), SECRET);
  fs.writeFileSync(path.join(art, 'report.md'), '## Report\n\n**done** <iframe src="https://evil"></iframe>');
  fs.writeFileSync(path.join(art, 'data.html'), '<script>alert("x")</script>');
  fs.writeFileSync(path.join(art, 'sub', 'inner.txt'), 'inner');
  fs.symlinkSync(path.join(ws, 'secret.txt'), path.join(art, 'leak.txt'));
  fs.symlinkSync('/etc/passwd', path.join(art, 'passwd'));
  fs.symlinkSync(path.join(art, 'report.md'), path.join(art, 'alias.md'));
  sys = await startTestSystem({ config: { stateMdPath: path.join(ws, 'STATE.md'), artifactsDir: art } });
  ro = await startTestSystem({ config: { readOnly: true } });
});
afterAll(async () => {
  await sys?.stop();
  await ro?.stop();
  fs.rmSync(ws, { recursive: true, force: true });
});

test('GET /api/state: the raw Markdown and its rendering with scripts, handlers and javascript: links removed', async () => {
  const r = await sys.tk.call('workspaceState');
  expect(r.status).toBe(200);
  expect(r.body.exists).toBe(true);
  expect(r.body.raw).toContain('<script>alert(1)</script>');
  expect(r.body.html).toContain('<h1>Goals</h1>');
  expect(r.body.html).toContain('<li>ship intents</li>');
  expect(r.body.html).not.toMatch(/<script|onerror|javascript:/i);
});

test('GET /api/artifacts lists regular files inside the folder only, no escaping links and no folders', async () => {
  const r = await sys.tk.call('listArtifacts');
  expect(r.status).toBe(200);
  expect(r.body.files.map((f) => f.name)).toEqual(['alias.md', 'data.html', 'report.md']);
  expect(r.body.files.find((f) => f.name === 'report.md')?.markdown).toBe(true);
});

test('a Markdown artifact is rendered and sanitised; another file is a download that the browser will not render', async () => {
  const md = await sys.tk.call('getArtifact', { params: { filename: 'report.md' } });
  expect(md.status).toBe(200);
  expect(md.body.html).toContain('<strong>done</strong>');
  expect(md.body.html).not.toContain('iframe');
  // A download is not JSON, which the route's contract cannot say (its 200 is the Markdown
  // answer): raw, so the body arrives as the bytes' text.
  const html = await sys.tk.raw('GET', '/api/artifacts/data.html');
  expect(html.status).toBe(200);
  expect(html.headers.get('content-type')).toBe('application/octet-stream');
  expect(html.headers.get('content-disposition')).toMatch(/^attachment; filename="?data\.html"?$/);
  expect(html.headers.get('x-content-type-options')).toBe('nosniff');
  expect(html.body).toBe('<script>alert("x")</script>');
  // A link that stays inside the folder is served.
  expect((await sys.tk.call('getArtifact', { params: { filename: 'alias.md' } })).status).toBe(200);
});

test.each([
  ['..%2Fsecret.txt', 400],
  ['%2e%2e%2fsecret.txt', 400],
  ['%2E%2E%2Fsecret.txt', 400],
  ['..%5Csecret.txt', 400],
  // The URL parser treats %2e%2e as a .. segment and removes it: no route at all.
  ['%2e%2e', 404],
  ['sub%2Finner.txt', 400],
  ['%252e%252e%252fsecret.txt', 404],
  ['..%252Fsecret.txt', 404],
  ['leak.txt', 404],
  ['passwd', 404],
  ['sub', 404],
  ['secret.txt', 404],
  ['%00', 400],
  ['report.md%00.txt', 400],
])('traversal attempt /api/artifacts/%s → %d and nothing from outside', async (name, status) => {
  // Raw: the name goes on the wire exactly as written, encodings and all.
  const r = await sys.tk.raw('GET', `/api/artifacts/${name}`);
  expect(r.status).toBe(status);
  expect(r.text).not.toContain(SECRET);
  expect(r.text).not.toContain('root:');
});

test('the raw path too: a literal ../ in the URL is normalised away before routing and never reaches outside', async () => {
  const r = await sys.tk.raw('GET', '/api/artifacts/../../secret.txt');
  expect(r.text).not.toContain(SECRET);
});

describe('DB_READ_ONLY=true', () => {
  test('every write is refused with 403 read_only and nothing is written; reads work', async () => {
    const id = `RO-${process.pid}-${Date.now()}`;
    const tk = ro.tk;
    const c = await refusal(tk.call('createIntent', { body: { event_id: id, domain: 'x', action: 'y' } }));
    expect(c.status).toBe(403);
    expect(c.body.type).toMatch(/read_only$/);
    expect(c.body.error).toMatch(/read-only \(DB_READ_ONLY=true\)/);
    expect((await refusal(tk.call('createIntentLog', { body: { event_id: id, domain: 'x', action: 'y' } }))).status).toBe(403);
    expect((await refusal(tk.call('transitionIntent', { params: { eventId: id }, body: { status: 'done' } }))).status).toBe(403);
    expect((await refusal(tk.call('createSession', { body: { session_id: `ro-${Date.now()}` } }))).status).toBe(403);
    const { rows } = await ro.pool.query('SELECT count(*)::int AS n FROM intents WHERE event_id = $1', [id]);
    expect(rows[0].n).toBe(0);
    expect((await tk.call('listIntents')).status).toBe(200);
    expect((await tk.call('pendingIntents')).status).toBe(200);
    expect((await tk.call('omlHealth')).body.read_only).toBe(true);
  });
});
