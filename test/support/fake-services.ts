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

/** Polls until `fn` returns a truthy value, or fails after `timeoutMs`. */
export async function eventually<T>(fn: () => Promise<T | undefined | null | false>, timeoutMs = 15_000, stepMs = 200): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((ok) => setTimeout(ok, stepMs));
  }
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
