/** The MCP server's stdio through the input gate: bad bytes, duplicate names and NUL are answered as JSON-RPC errors and go no further. */
import { McpStdinGate } from '../../integrations/mcp/stdin-gate';

async function through(...chunks: Buffer[]): Promise<{ passed: string; replies: { id: unknown; error: { code: number; message: string; data?: { field: string } } }[] }> {
  const replies: never[] = [];
  const gate = new McpStdinGate((m) => replies.push(m as never));
  const out: Buffer[] = [];
  gate.on('data', (b: Buffer) => out.push(b));
  const ended = new Promise((r) => gate.on('end', r));
  for (const c of chunks) gate.write(c);
  gate.end();
  await ended;
  return { passed: Buffer.concat(out).toString('utf8'), replies };
}

const call = (args: string, id = 7) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"log_event_done","arguments":${args}}}\n`;

test('clean messages pass unchanged, also when split across chunks', async () => {
  const m = call('{"event_id":"E-1","note":"北京 ok"}');
  const bytes = Buffer.from(m + m);
  const r = await through(bytes.subarray(0, 10), bytes.subarray(10, 70), bytes.subarray(70));
  expect(r.passed).toBe(m + m);
  expect(r.replies).toEqual([]);
});

test('invalid UTF-8 is a parse error (id null) and is dropped', async () => {
  const [a, b] = call('{"event_id":"E-1","note":"aXb"}').split('X');
  const r = await through(Buffer.concat([Buffer.from(a), Buffer.from([0xff]), Buffer.from(b)]), Buffer.from(call('{}', 8)));
  expect(r.replies).toEqual([{ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/not valid UTF-8 \(byte 0xff/) } }]);
  expect(r.passed).toBe(call('{}', 8));
});

test.each([
  ['a duplicate name', '{"event_id":"E-1","event_id":"E-2"}', 'params.arguments.event_id', /given twice/],
  ['NUL', '{"event_id":"E-1","note":"a\\u0000"}', 'params.arguments.note', /U\+0000/],
  ['a lone surrogate', '{"event_id":"E-1","result_data":{"x":"\\udc00"}}', 'params.arguments.result_data.x', /lone surrogate/],
])('%s is invalid params naming the argument, with the request id', async (_n, args, field, rule) => {
  const r = await through(Buffer.from(call(args)));
  expect(r.passed).toBe('');
  expect(r.replies[0].id).toBe(7);
  expect(r.replies[0].error.code).toBe(-32602);
  expect(r.replies[0].error.data?.field).toBe(field);
  expect(r.replies[0].error.message).toMatch(rule);
});

test('a line that is not JSON is left to the SDK', async () => {
  expect((await through(Buffer.from('not json\n'))).passed).toBe('not json\n');
});
