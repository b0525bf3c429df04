/**
 * Local stand-ins for the outside services tasks talk to, speaking their real protocols:
 * an OpenAI-compatible chat-completions endpoint and a webhook receiver that records what
 * it got. Both on 127.0.0.1, reachable because the tests list it in OUTBOUND_ALLOW_HOSTS.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface FakeServer {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

type Handler = (req: Received, n: number) => Promise<{ status?: number; body: unknown; delayMs?: number }> | { status?: number; body: unknown; delayMs?: number };

export async function fakeServer(handler: Handler): Promise<FakeServer> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(r);
      void Promise.resolve(handler(r, received.length)).then(async (out) => {
        if (out.delayMs) await new Promise((ok) => setTimeout(ok, out.delayMs));
        if (res.destroyed) return;
        res.writeHead(out.status ?? 200, { 'content-type': 'application/json' });
        res.end(typeof out.body === 'string' ? out.body : JSON.stringify(out.body));
      });
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () =>
      new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      }),
  };
}

/** The stand-ins one test file starts, closed together in its afterAll. */
export function fakeServers() {
  const all: FakeServer[] = [];
  return {
    /** Keeps a server started elsewhere (e.g. fakeOpenClawGateway) for closeAll. */
    track<S extends FakeServer>(s: S): S {
      all.push(s);
      return s;
    },
    start: async (h: Handler): Promise<FakeServer> => {
      const s = await fakeServer(h);
      all.push(s);
      return s;
    },
    closeAll: () => Promise.all(all.map((s) => s.close())),
  };
}

/** A chat-completions answer whose message content is `content`. */
export const chatAnswer = (content: string) => ({
  id: 'chatcmpl-test',
  object: 'chat.completion',
  created: Math.floor(Date.now() / 1000),
  model: 'test-model',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
});

export const protocolAnswer = (taskId: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ task_id: taskId, status: 'success', processed: 128, errors: [{ item: 7 }, { item: 9 }], summary: 'all good', next_action: null, ...extra });

export interface FakeOpenClaw extends FakeServer {
  /** Agent turns the Gateway started (a replayed Idempotency-Key starts none), with the body it got. */
  turns: { runId: string; idempotencyKey: string | undefined; body: Record<string, unknown> }[];
}

/**
 * A stand-in for an OpenClaw Gateway's hook endpoint, as OpenClaw's gateway answers it:
 * POST <hooksPath>/agent with `Authorization: Bearer <hooks.token>` (401 otherwise), a JSON body
 * whose `message` is required (400 otherwise), `Idempotency-Key` replays answering the first
 * turn's run id without starting another, and 200 `{ok: true, runId}` once a turn started.
 * `onTurn` plays the agent (e.g. posts the result to the callback the message names).
 */
export async function fakeOpenClawGateway(opts: { token: string; hooksPath?: string; onTurn?: (body: Record<string, unknown>) => void }): Promise<FakeOpenClaw> {
  const path = `${opts.hooksPath ?? '/hooks'}/agent`;
  const turns: FakeOpenClaw['turns'] = [];
  const byKey = new Map<string, string>();
  const s = await fakeServer((r) => {
    if (r.path !== path) return { status: 404, body: 'Not Found' };
    if (r.headers.authorization !== `Bearer ${opts.token}` && r.headers['x-openclaw-token'] !== opts.token) return { status: 401, body: 'Unauthorized' };
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(r.body);
    } catch {
      return { status: 400, body: { ok: false, error: 'invalid JSON' } };
    }
    if (typeof body.message !== 'string' || !body.message.trim()) return { status: 400, body: { ok: false, error: 'message required' } };
    const key = (r.headers['idempotency-key'] as string | undefined) ?? (r.headers['x-openclaw-idempotency-key'] as string | undefined);
    const replay = key ? byKey.get(key) : undefined;
    if (replay) return { body: { ok: true, runId: replay } };
    const runId = `oc-${turns.length + 1}`;
    if (key) byKey.set(key, runId);
    turns.push({ runId, idempotencyKey: key, body });
    opts.onTurn?.(body);
    return { body: { ok: true, runId } };
  });
  return Object.assign(s, { turns });
}

/** The servers a test file starts as its tests go, closed together in afterAll. */
export function serverPool(): { start: (h: Handler) => Promise<FakeServer>; closeAll: () => Promise<void> } {
  const all: FakeServer[] = [];
  return {
    start: async (h) => {
      const s = await fakeServer(h);
      all.push(s);
      return s;
    },
    closeAll: async () => {
      await Promise.all(all.map((s) => s.close()));
    },
  };
}
