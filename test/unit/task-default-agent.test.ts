/**
 * The scheduler article's own YAML example (section 3.4, /work/shared/seeds/004): no agent type,
 * and three backoff waits for three attempts. With TASK_DEFAULT_AGENT it is a task as written;
 * the unused wait is kept and named in the warnings. Both were 400s on main.
 */
import { definitionOf, defaultAgentProblem } from '../../lib/task-definition';
import { loadConfig } from '../../lib/config';
import { DomainError } from '../../lib/domain/errors';
import { backoffBeforeAttempt } from '../../lib/domain/tasks/retry';

/** The article's example, as JSON. */
const seedExample = () => ({
  task_id: 'daily-digest',
  trigger: { type: 'cron', expression: '0 17 * * 1-5', timezone: 'Asia/Shanghai' },
  agent: { persona: '舆情分析师', prompt_template: '请基于今日重点话题生成一份不超过500字的摘要，包含趋势分析和异常提醒。' },
  delivery: { type: 'webhook', url: 'https://your-robot.example/hook', format: 'markdown' },
  retry: { max_attempts: 3, backoff_seconds: [60, 300, 1800] },
});

/** The operator's rules this example needs: the local LLM allowed, its key registered. */
const policy = { outboundAllowHosts: ['127.0.0.1'], agentSecrets: ['LLM_API_KEY'] };

const defaultAgent = { type: 'openai', base_url: 'http://127.0.0.1:11434/v1', model: 'qwen2.5', api_key_env: 'LLM_API_KEY' };

test('the seed example posts as written with a default agent; the extra wait is stored, unused, and named', () => {
  const { definition, warnings } = definitionOf(seedExample(), Date.now(), policy, {}, { agent: defaultAgent });
  expect(definition.agent).toEqual({ ...defaultAgent, persona: '舆情分析师', prompt_template: seedExample().agent.prompt_template });
  expect(definition.retry).toEqual({ max_attempts: 3, backoff_seconds: [60, 300, 1800] });
  expect(warnings).toEqual([{ field: 'retry.backoff_seconds', reason: 'has 3 entries; max_attempts 3 waits 2 times, so only the first 2 are used' }]);
  // The waits before attempts 2 and 3: the third entry is never used.
  expect([2, 3].map((n) => backoffBeforeAttempt(definition.retry, n))).toEqual([60, 300]);
});

test("the task's own agent fields win over the default's; a task naming its type ignores the default", () => {
  const own = definitionOf({ ...seedExample(), agent: { ...seedExample().agent, model: 'llama3' } }, Date.now(), policy, {}, { agent: defaultAgent });
  expect(own.definition.agent).toMatchObject({ type: 'openai', model: 'llama3', base_url: defaultAgent.base_url });
  const webhook = definitionOf({ ...seedExample(), agent: { type: 'webhook', url: 'http://127.0.0.1:9/a', prompt_template: 'x' } }, Date.now(), policy, {}, { agent: defaultAgent });
  expect(webhook.definition.agent).toEqual({ type: 'webhook', url: 'http://127.0.0.1:9/a', prompt_template: 'x' });
  // A field the default's type does not have is refused, naming it.
  try {
    definitionOf({ ...seedExample(), agent: { ...seedExample().agent, url: 'http://x/' } }, Date.now(), policy, {}, { agent: defaultAgent });
    throw new Error('expected a refusal');
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect(JSON.stringify((err as DomainError).errors)).toContain('agent');
  }
});

test('without a default agent, a task without an agent type is refused naming agent; a fitting list has no warnings', () => {
  expect(() => definitionOf(seedExample(), Date.now(), policy)).toThrow(/type must be one of/);
  const fits = definitionOf({ ...seedExample(), agent: { ...defaultAgent, prompt_template: 'x' }, retry: { max_attempts: 3, backoff_seconds: [60, 300] } }, Date.now(), policy);
  expect(fits.warnings).toEqual([]);
  const once = definitionOf({ ...seedExample(), agent: { ...defaultAgent, prompt_template: 'x' }, retry: { max_attempts: 1, backoff_seconds: [5] } }, Date.now(), policy);
  expect(once.warnings[0].reason).toBe('has 1 entry; max_attempts 1 never waits, so none is used');
});

test('TASK_DEFAULT_AGENT: JSON with a known type, else start-up stops naming the variable; the contract checks the rest', () => {
  expect(loadConfig({}).taskDefaultAgent).toBeUndefined();
  expect(loadConfig({ TASK_DEFAULT_AGENT: JSON.stringify(defaultAgent) } as NodeJS.ProcessEnv).taskDefaultAgent).toEqual(defaultAgent);
  for (const bad of ['{', '[]', '{"type":"smoke-signals"}', '"openai"']) {
    expect(() => loadConfig({ TASK_DEFAULT_AGENT: bad } as NodeJS.ProcessEnv)).toThrow(/^TASK_DEFAULT_AGENT must be a JSON object with "type" one of openai, webhook, openclaw, digest/);
  }
  expect(defaultAgentProblem(defaultAgent)).toBeUndefined();
  expect(defaultAgentProblem({ type: 'openai', model: 'm' })).toMatch(/^agent\.base_url: /);
});
