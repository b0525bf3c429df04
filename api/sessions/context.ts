/**
 * History formatted for an LLM, as the seed's agent loop builds its prompt context. Never
 * includes anything after the as-of point: an agent reasoning "as of" seq N must not see
 * the future.
 */
import type { JsonValue, StoredEvent } from '../../lib/domain/sessions';
import { canonicalize } from '../../lib/domain/canonical-json';

export type Lang = 'en' | 'zh';

const LABELS: Record<
  Lang,
  { user: string; agent: string; toolCall: string; params: string; toolResult: string; created: string; ended: string; intent: string; newIntent: string; by: string; taskRun: string }
> = {
  en: {
    user: 'User: ',
    agent: 'Agent: ',
    toolCall: 'Tool call: ',
    params: ', params: ',
    toolResult: 'Tool result: ',
    created: 'Session created',
    ended: 'Session ended',
    intent: 'Intent ',
    newIntent: 'new',
    by: 'by Timekeeper',
    taskRun: 'Scheduled task ',
  },
  // The seed's own labels, for agents prompted in Chinese.
  zh: {
    user: '用户：',
    agent: '智能体：',
    toolCall: '调用工具：',
    params: '，参数：',
    toolResult: '工具返回：',
    created: '会话创建',
    ended: '会话结束',
    intent: '意图 ',
    newIntent: '新建',
    by: '由 Timekeeper 执行',
    taskRun: '定时任务 ',
  },
};

/** "Intent EMAIL-1 (send-summary): requested → done: Email sent", with "(by Timekeeper)" for expiry and retries. */
function intentLine(content: JsonValue, L: (typeof LABELS)[Lang]): string {
  const from = field(content, 'from');
  const note = field(content, 'note');
  const system = field(content, 'actor') === 'system';
  return (
    `${L.intent}${field(content, 'event_id') ?? '?'} (${field(content, 'action') ?? '?'}): ${from && from !== 'null' ? from : L.newIntent} → ${field(content, 'to') ?? '?'}` +
    (note && note !== 'null' ? `: ${note}` : '') +
    (system ? ` (${L.by})` : '')
  );
}

/** A TASK_RUN event in words: which task, which fire time, how it ended, its summary. */
function taskRunLine(content: JsonValue, lang: Lang): string {
  const name = field(content, 'task_name') ?? field(content, 'task_id') ?? '?';
  const status = field(content, 'status') ?? '?';
  const at = field(content, 'scheduled_at') ?? '?';
  const summary = field(content, 'summary');
  if (lang === 'zh') return `${LABELS.zh.taskRun}${name}（计划 ${at}）：${status}${summary ? `，${summary}` : ''}`;
  return `${LABELS.en.taskRun}${name} (scheduled ${at}): ${status}${summary ? `: ${summary}` : ''}`;
}

function field(content: JsonValue, ...names: string[]): string | undefined {
  if (content && typeof content === 'object' && !Array.isArray(content)) {
    for (const n of names) {
      const v = content[n];
      if (v !== undefined) return typeof v === 'string' ? v : canonicalize(v);
    }
  }
  return undefined;
}

const text = (content: JsonValue, ...names: string[]) =>
  field(content, ...names) ?? (typeof content === 'string' ? content : canonicalize(content));

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  seq: number;
  ts: number;
  /** When it happened, as its writer said (ms), or null; ts is when Timekeeper stored it. */
  occurred_at: number | null;
}

export function formatLine(e: StoredEvent, lang: Lang): string {
  const L = LABELS[lang];
  switch (e.event_type) {
    case 'USER_INPUT':
      return L.user + text(e.content, 'input', 'text', 'message');
    case 'LLM_RESPONSE':
      return L.agent + text(e.content, 'response', 'text', 'message');
    case 'TOOL_CALL':
      return L.toolCall + (field(e.content, 'tool_name', 'name') ?? '?') + L.params + (field(e.content, 'params', 'arguments') ?? '{}');
    case 'TOOL_RESULT':
      return L.toolResult + text(e.content, 'result', 'output');
    case 'SESSION_CREATE':
      return L.created;
    case 'SESSION_END':
      return L.ended + (field(e.content, 'reason') ? ` (${field(e.content, 'reason')})` : '');
    case 'INTENT_TRANSITION':
      return intentLine(e.content, L);
    case 'TASK_RUN':
      return taskRunLine(e.content, lang);
    default:
      return `${e.event_type}: ${canonicalize(e.content)}`;
  }
}

export function toMessage(e: StoredEvent, lang: Lang): ChatMessage {
  const role: ChatMessage['role'] =
    e.event_type === 'USER_INPUT' ? 'user' : e.event_type === 'LLM_RESPONSE' ? 'assistant' : e.event_type.startsWith('TOOL_') ? 'tool' : 'system';
  const content =
    role === 'user'
      ? text(e.content, 'input', 'text', 'message')
      : role === 'assistant'
        ? text(e.content, 'response', 'text', 'message')
        : formatLine(e, lang);
  return { role, content, seq: e.seq, ts: e.ts, occurred_at: e.occurred_at ?? null };
}

/**
 * The time a line is prefixed with: when the event happened if its writer said so (an outbox
 * may deliver minutes after the fact, and the agent reasons about when things happened), else
 * when it was stored.
 */
export const eventTime = (e: Pick<StoredEvent, 'ts' | 'occurred_at'>): number => e.occurred_at ?? e.ts;

export function formatContext(events: StoredEvent[], lang: Lang, timestamps: boolean): string {
  return events
    .map((e) => (timestamps ? `[${new Date(eventTime(e)).toISOString()}] ` : '') + formatLine(e, lang))
    .join('\n');
}
