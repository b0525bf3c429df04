/**
 * What a bench scenario drives: Timekeeper over HTTP (the seed endpoints, through the typed
 * client) or the bare-Update floor (bench/floor/floor.ts). A call resolves when it succeeded
 * and throws when it did not (BenchFailure carries the kind it is counted under).
 */
import type { TimekeeperClient } from '../sdk/client';
import { BenchFailure, problemType, text } from './measure';

export interface BenchTarget {
  name: string;
  /** Creates session (or workflow) `id`. */
  init(id: string): Promise<void>;
  /** The k-th append (1-based) to `id`: USER_INPUT when k is odd, LLM_RESPONSE when even. */
  append(id: string, k: number): Promise<void>;
  /** Reads `id` back; resolves to the number of events it holds. Absent: the target has no reads. */
  read?(id: string): Promise<number>;
}

/**
 * Success is HTTP 2xx and, on the seed surface, envelope code 200 (the seed envelope carries its
 * own code, so a 200 with another code is still a failure).
 */
function seedOk<B>(r: { status: number; body: B }): B {
  if (r.status < 200 || r.status >= 300) throw new BenchFailure(`HTTP ${r.status} ${problemType(r.body)}`.trim(), `HTTP ${r.status} ${text(r.body)}`);
  const code = (r.body as { code?: unknown } | null)?.code;
  if (code !== 200) throw new BenchFailure(`envelope code ${code}`, `envelope code ${code} ${text(r.body)}`);
  return r.body;
}

/** The k-th append's fields, as an agent loop sends them: a question, then the model's answer. */
export function agentEvent(k: number) {
  const user = k % 2 === 1;
  return {
    event_type: user ? ('USER_INPUT' as const) : ('LLM_RESPONSE' as const),
    content: user ? { input: `bench question ${k}` } : { response: `bench answer ${k}` },
  };
}

export function timekeeperTarget(tk: TimekeeperClient): BenchTarget {
  return {
    name: 'Timekeeper',
    async init(id) {
      seedOk(await tk.call('seedInit', { query: { session_id: id } }));
    },
    async append(id, k) {
      const e = agentEvent(k);
      seedOk(await tk.call('seedAppend', { query: { session_id: id, event_type: e.event_type, content: JSON.stringify(e.content) } }));
    },
    async read(id) {
      return seedOk(await tk.call('seedGet', { query: { session_id: id } })).data?.events?.length ?? 0;
    },
  };
}
