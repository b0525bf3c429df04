/** The settings behind outgoing requests and agent secrets (lib/config.ts) and the status line a run's reason gets (lib/platform/outbound.ts answerLine). */
import { loadConfig, readSecret } from '../../lib/config';
import { answerLine } from '../../lib/platform/outbound';

test('AGENT_SECRETS lists the only names readSecret reads; unregistered and own variables are never read', () => {
  const env = { LLM_API_KEY: 'sk-1', INTENT_WAKE_TOKEN: 'wake', DATABASE_URL: 'postgres://x', OTHER: 'o' };
  const c = loadConfig({ AGENT_SECRETS: 'LLM_API_KEY, GATEWAY_TOKEN' });
  expect(c.agentSecrets).toEqual(['LLM_API_KEY', 'GATEWAY_TOKEN']);
  expect(readSecret('LLM_API_KEY', c.agentSecrets, env)).toBe('sk-1');
  expect(readSecret('GATEWAY_TOKEN', c.agentSecrets, env)).toBeUndefined(); // registered, not set
  expect(readSecret('OTHER', c.agentSecrets, env)).toBeUndefined();
  expect(readSecret('INTENT_WAKE_TOKEN', ['INTENT_WAKE_TOKEN'], env)).toBeUndefined(); // even if a caller lists it
  expect(readSecret('DATABASE_URL', ['DATABASE_URL'], env)).toBeUndefined();
  expect(loadConfig({}).agentSecrets).toEqual([]);
});

test.each(['INTENT_WAKE_TOKEN', 'DATABASE_URL', 'SECRETS_KEY', 'APP_DB_PASSWORD', 'TIMEKEEPER_API_KEYS', 'TEMPORAL_ADDRESS', 'HOME'])('AGENT_SECRETS may not register %s (a start-up error)', (name) => {
  expect(() => loadConfig({ AGENT_SECRETS: `LLM_API_KEY,${name}` })).toThrow(`AGENT_SECRETS: ${name} is one of Timekeeper's own variables`);
});

test('AGENT_SECRETS refuses a name that is no variable name', () => {
  expect(() => loadConfig({ AGENT_SECRETS: 'llm key' })).toThrow(/not an environment variable name/);
});

test('a non-2xx answer: the standard status line; the body only with OUTBOUND_ECHO_BODIES', () => {
  const res = { status: 500, body: 'secret internal answer' };
  expect(loadConfig({}).outboundEchoBodies).toBe(false);
  expect(loadConfig({ OUTBOUND_ECHO_BODIES: 'true' }).outboundEchoBodies).toBe(true);
  expect(() => loadConfig({ OUTBOUND_ECHO_BODIES: 'yes' })).toThrow('OUTBOUND_ECHO_BODIES must be true or false');
  expect(answerLine(res, false)).toBe('HTTP 500 Internal Server Error');
  expect(answerLine({ status: 599, body: 'x' }, false)).toBe('HTTP 599');
  expect(answerLine(res, true)).toBe('HTTP 500 Internal Server Error: secret internal answer');
});
