/**
 * A local model provider speaking the OpenAI chat-completions protocol (POST /v1/chat/completions,
 * streamed or not): the first request of a conversation answers with one tool call, the request
 * that carries the tool's result answers with a final text. No outside service.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MockLlm {
  url: string;
  requests: { tools: string[]; messages: number; hasToolResult: boolean }[];
  /** Called when a request arrives, before it is answered (the e2e stops Timekeeper here). */
  onRequest?: (n: number) => Promise<void> | void;
  close(): Promise<void>;
}

export async function startMockLlm(opts: { tool: (tools: string[]) => { name: string; args: Record<string, unknown> }; finalText: string }): Promise<MockLlm> {
  const mock: MockLlm = { url: '', requests: [], close: async () => {} };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', async () => {
      if (req.method === 'GET' && /\/models$/.test(req.url ?? '')) {
        res.setHeader('content-type', 'application/json');
        return res.end(JSON.stringify({ object: 'list', data: [{ id: 'mock-model', object: 'model', owned_by: 'mock' }] }));
      }
      if (!/\/chat\/completions$/.test(req.url ?? '')) {
        res.statusCode = 404;
        return res.end('{}');
      }
      const body = JSON.parse(raw || '{}') as { messages?: { role: string }[]; tools?: { function?: { name?: string } }[]; stream?: boolean };
      const tools = (body.tools ?? []).map((t) => t.function?.name ?? '').filter(Boolean);
      const hasToolResult = (body.messages ?? []).some((m) => m.role === 'tool');
      mock.requests.push({ tools, messages: body.messages?.length ?? 0, hasToolResult });
      await mock.onRequest?.(mock.requests.length);
      const id = `chatcmpl-${mock.requests.length}`;
      const created = Math.floor(Date.now() / 1000);
      const call = !hasToolResult && tools.length ? opts.tool(tools) : undefined;
      const message = call
        ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${mock.requests.length}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }] }
        : { role: 'assistant', content: opts.finalText };
      const finish = call ? 'tool_calls' : 'stop';
      const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
      if (!body.stream) {
        res.setHeader('content-type', 'application/json');
        return res.end(JSON.stringify({ id, object: 'chat.completion', created, model: 'mock-model', choices: [{ index: 0, message, finish_reason: finish }], usage }));
      }
      res.setHeader('content-type', 'text/event-stream');
      const chunk = (delta: unknown, finish_reason: string | null, extra: object = {}) =>
        res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: 'mock-model', choices: [{ index: 0, delta, finish_reason }], ...extra })}\n\n`);
      if (call) {
        chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: message.tool_calls![0].id, type: 'function', function: { name: call.name, arguments: '' } }] }, null);
        chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify(call.args) } }] }, null);
      } else {
        chunk({ role: 'assistant', content: opts.finalText }, null);
      }
      chunk({}, finish, { usage });
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  mock.close = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  return mock;
}
