/** The POST /hooks/agent request an openclaw agent gets (activities/tasks/openclaw-agent.ts): URL, headers, OpenClaw's body fields, the message. */
import { openclawHookRequest, type OpenClawTurn } from '../../activities/tasks/openclaw-agent';
import { TASK_DEFAULTS, type OpenClawAgent, type TaskDefinition } from '../../lib/domain/tasks';

const agent: OpenClawAgent = { type: 'openclaw', url: 'http://127.0.0.1:18789/', hooks_path: '/hooks/', token_env: 'OPENCLAW_HOOKS_TOKEN', prompt_template: 'p', deliver: false };
const task = (lang: 'en' | 'zh' = 'en'): TaskDefinition => ({
  ...TASK_DEFAULTS,
  task_id: 'digest',
  name: 'Digest',
  trigger: { type: 'at', at: '2099-01-01T00:00:00Z' },
  agent,
  delivery: [],
  tags: [],
  timeout_s: 120,
  lang,
});
const turn = (over: Partial<OpenClawTurn> = {}): OpenClawTurn => ({
  task: task(),
  agent,
  token: 'tok',
  runId: 'run/digest/2026-03-09T09:00:00.000Z',
  attempt: 2,
  system: 'SYSTEM PROMPT',
  prompt: 'THE PROMPT',
  resultUrl: 'http://tk.example/v1/runs/run%2Fdigest%2F2026-03-09T09%3A00%3A00.000Z/result',
  ...over,
});

test('URL from the base and hooks_path (slashes trimmed), bearer token, idempotency key per run and attempt', () => {
  const r = openclawHookRequest(turn());
  expect(r.url).toBe('http://127.0.0.1:18789/hooks/agent');
  expect(r.headers).toEqual({ 'content-type': 'application/json', authorization: 'Bearer tok', 'idempotency-key': 'run/digest/2026-03-09T09:00:00.000Z#2' });
  expect(openclawHookRequest(turn({ agent: { ...agent, hooks_path: '/gw/hooks' } })).url).toBe('http://127.0.0.1:18789/gw/hooks/agent');
});

test("the body has OpenClaw's fields only: optional ones only when set; timeoutSeconds is the task's timeout", () => {
  expect(JSON.parse(openclawHookRequest(turn()).body)).toEqual({ message: expect.any(String), name: 'Timekeeper: Digest', wakeMode: 'now', deliver: false, timeoutSeconds: 120 });
  const full = JSON.parse(openclawHookRequest(turn({ agent: { ...agent, agent_id: 'ops', session_key: 'hook:timekeeper:digest', model: 'openai/gpt-5.2-mini', deliver: true } })).body);
  expect(full).toMatchObject({ agentId: 'ops', sessionKey: 'hook:timekeeper:digest', model: 'openai/gpt-5.2-mini', deliver: true });
});

test('the message: system prompt, the rendered prompt, then where to report (in the task language)', () => {
  const en = JSON.parse(openclawHookRequest(turn()).body).message as string;
  expect(en.indexOf('SYSTEM PROMPT')).toBeLessThan(en.indexOf('THE PROMPT'));
  expect(en).toContain('POST the result (the JSON object of the answer protocol above, optionally with "attempt": 2) to http://tk.example/v1/runs/');
  const zh = JSON.parse(openclawHookRequest(turn({ task: task('zh') })).body).message as string;
  expect(zh).toContain('## 回报结果');
  expect(zh).toContain('以 POST 发送到 http://tk.example/v1/runs/');
});
