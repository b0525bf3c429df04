/** Waiting in tests: a pause, and polling until a condition holds (instead of a fixed pause). */

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface WaitOptions {
  /** What is awaited, named in the error when the wait times out. */
  what?: string;
  /** How long to poll before failing. Default 15 s. */
  timeoutMs?: number;
  /** The pause between checks. Default 200 ms. */
  stepMs?: number;
  /** A throw from the check: 'retry' counts it as not yet (the last one is named on timeout), 'throw' fails the wait at once. Default 'retry'. */
  errors?: 'retry' | 'throw';
  /** More to say when the wait times out (e.g. the output of the process waited on). */
  detail?: () => string;
}

/** Not yet: undefined, null or false; anything else is the awaited value. */
export type Check<T> = () => T | undefined | null | false | Promise<T | undefined | null | false>;

/**
 * Polls `check` until it gives a value other than undefined, null or false, and resolves with
 * it; fails after `timeoutMs`. A number for `opts` is the timeout. Called as
 * `eventually(check, opts)` or `eventually(what, check, opts)`.
 */
export function eventually<T>(check: Check<T>, opts?: WaitOptions | number): Promise<T>;
export function eventually<T>(what: string, check: Check<T>, opts?: WaitOptions | number): Promise<T>;
export async function eventually<T>(a: string | Check<T>, b?: Check<T> | WaitOptions | number, c?: WaitOptions | number): Promise<T> {
  const [check, given] = typeof a === 'string' ? [b as Check<T>, { ...asOptions(c), what: a }] : [a, asOptions(b as WaitOptions | number | undefined)];
  const { what, timeoutMs = 15_000, stepMs = 200, errors = 'retry', detail } = given;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== null && v !== false) return v;
    } catch (err) {
      if (errors === 'throw') throw err;
      last = err;
    }
    if (Date.now() > deadline) {
      const cause = last instanceof Error ? `: ${last.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what ?? 'the condition'}${cause}${detail ? `; ${detail()}` : ''}`);
    }
    await sleep(stepMs);
  }
}

const asOptions = (o: WaitOptions | number | undefined): WaitOptions => (typeof o === 'number' ? { timeoutMs: o } : (o ?? {}));
