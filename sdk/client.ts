/**
 * The typed HTTP client for the whole API, for tests, the bench, the CLI and a browser
 * dashboard. Every request and response type comes from the route contracts (api/routes.ts):
 * `z.input<>` of a route's params, query and body, `z.output<>` of its success responses.
 * Nothing here is a hand-written copy of a request or response.
 *
 *   const tk = new TimekeeperClient({ baseUrl: 'http://127.0.0.1:8000', apiKey });
 *   const r = await tk.call('appendEvent', { params: { id }, body: { type: 'USER_INPUT', content: { input: 'hi' } } });
 *   r.status;          // 201 | 200
 *   r.body.seq;        // an AppendedEvent
 *   await tk.append(id, { type: 'USER_INPUT', content: 'hi' }); // the same, body only
 *   await tk.intents.create({ event_id: 'EMAIL-1', domain: 'communication', action: 'send' });
 *   await tk.tasks.pause('daily-digest');              // tk.tasks, tk.runs, tk.schedules: the task routes
 *   await tk.signals.send({ name: 'error_rate', value: 0.07 }); // delay and condition triggers
 *
 * A status the route's contract lists under `responses` resolves (readiness lists 503 too);
 * any other status rejects with a TimekeeperApiError carrying the problem details. `raw()`
 * sends whatever it is given and never throws on a status, for tests of hostile input.
 *
 * Runs anywhere `fetch` does: it imports no Node built-ins and no server code, only the pure
 * contract modules (for each route's method, path and, with `validateResponses`, schemas).
 */
import type { z } from 'zod';
import { ProblemSchema } from '../api/contract';
import type { RouteContract } from '../api/contract';
import { routes } from '../api/routes';
import type { RouteName, Routes } from '../api/routes';

export type { RouteName } from '../api/routes';

// ---- types from the contracts ---------------------------------------------------------

/** RFC 9457 problem details as every error response carries them (api/contract.ts). */
export type Problem = z.output<typeof ProblemSchema>;

/**
 * Query values travel as text: where a contract takes a free string (an integer it parses,
 * a session id) a number is accepted too; enumerations keep their literal types.
 */
export type QueryValues<Q> = { [K in keyof Q]: string extends NonNullable<Q[K]> ? Q[K] | number : Q[K] };

type Part<R, K extends 'params' | 'query' | 'body', V> = R extends { [P in K]: z.ZodType }
  ? {} extends V
    ? { [P in K]?: V }
    : { [P in K]: V }
  : { [P in K]?: undefined };
type InputOf<R, K extends 'params' | 'query' | 'body'> = R extends { [P in K]: infer S extends z.ZodType } ? z.input<S> : never;

export interface CallOptions {
  /** Extra request headers (an `authorization` here overrides the client's API key). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** What `call(name, …)` takes: the route's path parameters, query and body, by its contract. */
export type CallRequest<N extends RouteName> = Part<Routes[N], 'params', InputOf<Routes[N], 'params'>> &
  Part<Routes[N], 'query', QueryValues<InputOf<Routes[N], 'query'>>> &
  Part<Routes[N], 'body', InputOf<Routes[N], 'body'>> &
  CallOptions;

type ResponsesOf<N extends RouteName> = Routes[N]['responses'];
/** The statuses a route's contract answers with a response schema. */
export type SuccessStatus<N extends RouteName> = keyof ResponsesOf<N> & number;

/** What `call(name, …)` resolves to: one member per documented status, so `status` narrows `body`. */
export type CallResponse<N extends RouteName> = {
  [S in SuccessStatus<N>]: { status: S; body: ResponsesOf<N>[S] extends z.ZodType ? z.output<ResponsesOf<N>[S]> : never; headers: Headers };
}[SuccessStatus<N>];

/** The response body of a route (any of its documented statuses). */
export type ResponseBody<N extends RouteName> = CallResponse<N>['body'];

type CallArgs<N extends RouteName> = {} extends CallRequest<N> ? [req?: CallRequest<N>] : [req: CallRequest<N>];

// ---- errors -----------------------------------------------------------------------------

/** A status the route's contract does not answer with a response: the server's problem details. */
export class TimekeeperApiError extends Error {
  override readonly name = 'TimekeeperApiError';

  constructor(
    /** The route's name in api/routes.ts. */
    readonly route: string,
    readonly status: number,
    /** The problem details; a stand-in of type `about:blank` when the body was not one. */
    readonly problem: Problem,
    /** The response body as received (parsed JSON, or the text). */
    readonly body: unknown,
    readonly headers: Headers,
  ) {
    super(`${route}: HTTP ${status} ${problem.type.split('/').pop()}: ${problem.detail}`);
  }

  get type(): string {
    return this.problem.type;
  }

  /** The error catalogue code the problem type ends in, e.g. `wrong_expected_seq`. */
  get errorCode(): string {
    return this.problem.type.split('/').pop() ?? '';
  }

  get detail(): string {
    return this.problem.detail;
  }

  get errors(): { field: string; reason: string }[] {
    return this.problem.errors ?? [];
  }
}

/** With `validateResponses`: the server answered something its own contract does not describe. */
export class TimekeeperContractError extends Error {
  override readonly name = 'TimekeeperContractError';

  constructor(
    readonly route: string,
    readonly status: number,
    /** What differs from the contract. */
    readonly mismatch: string,
    readonly body: unknown,
  ) {
    super(`${route}: HTTP ${status} does not match the contract: ${mismatch}; body ${preview(body)}`);
  }
}

// ---- the client -------------------------------------------------------------------------

export interface TimekeeperClientOptions {
  /** e.g. `http://127.0.0.1:8000`; a trailing slash is ignored. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <key>`. */
  apiKey?: string;
  /** A fetch to use instead of the global one (a custom agent, a test double). */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** Abort each request after this many ms (the promise rejects with a TimeoutError). */
  timeoutMs?: number;
  /** Check every answer against the route's contract (body schema, content type, documented error status). */
  validateResponses?: boolean;
}

export interface RawOptions {
  /** A string or bytes are sent as they are; anything else (not undefined) as JSON. */
  body?: unknown;
  /** Without a content-type, a request with a body is sent as application/json. */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** A raw answer: untyped, since raw requests are the ones the contract does not describe. */
export interface RawResponse {
  status: number;
  /** Parsed JSON, or the text when it is not JSON. */
  body: any;
  text: string;
  headers: Headers;
}

/** What a route takes as its query (numbers allowed where the contract parses text) and as its body. */
type QueryOf<N extends RouteName> = QueryValues<InputOf<Routes[N], 'query'>>;
type BodyOf<N extends RouteName> = InputOf<Routes[N], 'body'>;

export class TimekeeperClient {
  readonly baseUrl: string;
  private readonly fetchImpl: (input: string, init: RequestInit) => Promise<Response>;

  constructor(readonly options: TimekeeperClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    // Called as a plain function: a browser's fetch refuses to run with another `this`.
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** The same client with some options changed, e.g. `tk.with({ apiKey: undefined })`. */
  with(overrides: Partial<TimekeeperClientOptions>): TimekeeperClient {
    return new TimekeeperClient({ ...this.options, ...overrides });
  }

  /** Calls a route by name; resolves for the statuses its contract documents, rejects with TimekeeperApiError otherwise. */
  async call<N extends RouteName>(name: N, ...[req]: CallArgs<N>): Promise<CallResponse<N>> {
    const c: RouteContract = routes[name];
    const r = (req ?? {}) as { params?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown } & CallOptions;
    const path = c.path.replace(/:([A-Za-z_]+)/g, (_m, k: string) => {
      const v = r.params?.[k];
      if (v === undefined || v === null) throw new TypeError(`${name}: path parameter ${k} is required`);
      return encodeURIComponent(String(v));
    });
    const res = await this.send(c.method.toUpperCase(), path + queryString(r.query), r.body === undefined ? undefined : JSON.stringify(r.body), r);
    const declared = Object.prototype.hasOwnProperty.call(c.responses, res.status);
    if (this.options.validateResponses) checkContract(name, c, res, declared);
    if (declared) return { status: res.status, body: c.contentType === 'text/plain' ? res.text : res.body, headers: res.headers } as CallResponse<N>;
    throw new TimekeeperApiError(name, res.status, asProblem(res), res.body, res.headers);
  }

  /**
   * Sends exactly what it is given, for requests the contract does not describe (malformed
   * bodies, repeated query parameters, bad percent-encoding); never throws on a status.
   */
  async raw(method: string, path: string, opts: RawOptions = {}): Promise<RawResponse> {
    const body = opts.body === undefined || typeof opts.body === 'string' || opts.body instanceof Uint8Array ? opts.body : JSON.stringify(opts.body);
    return this.send(method.toUpperCase(), path, body, opts);
  }

  // ---- convenience: the common operations, each `call(…)` returning the body ------------------

  async health(): Promise<ResponseBody<'health'>> {
    return (await this.call('health')).body;
  }

  async createSession(body: BodyOf<'createSession'>, opts?: CallOptions): Promise<ResponseBody<'createSession'>> {
    return (await this.call('createSession', { ...opts, body })).body;
  }

  async listSessions(query?: QueryOf<'listSessions'>, opts?: CallOptions): Promise<ResponseBody<'listSessions'>> {
    return (await this.call('listSessions', { ...opts, query })).body;
  }

  async session(id: string, opts?: CallOptions): Promise<ResponseBody<'getSession'>> {
    return (await this.call('getSession', { ...opts, params: { id } })).body;
  }

  /** Appends an event; a retry of a stored one answers it again with `deduplicated: true`. */
  async append(id: string, body: BodyOf<'appendEvent'>, opts?: CallOptions): Promise<ResponseBody<'appendEvent'>> {
    return (await this.call('appendEvent', { ...opts, params: { id }, body })).body;
  }

  async end(id: string, body?: BodyOf<'endSession'>, opts?: CallOptions): Promise<ResponseBody<'endSession'>> {
    return (await this.call('endSession', { ...opts, params: { id }, body })).body;
  }

  async events(id: string, query?: QueryOf<'listEvents'>, opts?: CallOptions): Promise<ResponseBody<'listEvents'>> {
    return (await this.call('listEvents', { ...opts, params: { id }, query })).body;
  }

  async context(id: string, query?: QueryOf<'getContext'>, opts?: CallOptions): Promise<ResponseBody<'getContext'>> {
    return (await this.call('getContext', { ...opts, params: { id }, query })).body;
  }

  async verify(id: string, opts?: CallOptions): Promise<ResponseBody<'verifySession'>> {
    return (await this.call('verifySession', { ...opts, params: { id } })).body;
  }

  async workflow(id: string, opts?: CallOptions): Promise<ResponseBody<'getWorkflow'>> {
    return (await this.call('getWorkflow', { ...opts, params: { id } })).body;
  }

  /** The seed endpoints: parameters in the query string, answers in the `{code, msg, data}` envelope. */
  readonly seed = {
    /** `occurred_at`: when the session began (RFC 3339), SESSION_CREATE's occurred_at. */
    init: async (session_id: string, opts?: CallOptions & { occurred_at?: string }): Promise<ResponseBody<'seedInit'>> => {
      const { occurred_at, ...call } = opts ?? {};
      return (await this.call('seedInit', { ...call, query: { session_id, ...(occurred_at !== undefined ? { occurred_at } : {}) } })).body;
    },
    append: async (query: QueryOf<'seedAppend'>, opts?: CallOptions): Promise<ResponseBody<'seedAppend'>> =>
      (await this.call('seedAppend', { ...opts, query })).body,
    get: async (query: QueryOf<'seedGet'>, opts?: CallOptions): Promise<ResponseBody<'seedGet'>> => (await this.call('seedGet', { ...opts, query })).body,
  };

  /**
   * The OML-compatible intent routes (/api/events*): record an intent before acting, move it
   * on (in-progress, done, blocked, requested again), ask what is pending after a restart.
   * `withIntent` and `recover` in sdk/intents/helpers.ts build on these.
   */
  readonly intents = {
    /** Records an intent (status requested unless given); 409 intent_exists or duplicate_intent reject. */
    create: async (body: BodyOf<'createIntent'>, opts?: CallOptions): Promise<ResponseBody<'createIntent'>> =>
      (await this.call('createIntent', { ...opts, body })).body,
    /** Moves an intent to its next state; an illegal move rejects with 409 invalid_transition (current_status, allowed_next). */
    transition: async (eventId: string, body: BodyOf<'transitionIntent'>, opts?: CallOptions): Promise<ResponseBody<'transitionIntent'>> =>
      (await this.call('transitionIntent', { ...opts, params: { eventId }, body })).body,
    /** Intents still requested or in progress, oldest first. */
    pending: async (query?: QueryOf<'pendingIntents'>, opts?: CallOptions): Promise<ResponseBody<'pendingIntents'>> =>
      (await this.call('pendingIntents', { ...opts, query })).body,
    /** One intent with every transition and its workflow's next timer. */
    get: async (eventId: string, opts?: CallOptions): Promise<ResponseBody<'getIntent'>> =>
      (await this.call('getIntent', { ...opts, params: { eventId } })).body,
    /** Intents newest first, filtered and paged. */
    list: async (query?: QueryOf<'listIntents'>, opts?: CallOptions): Promise<ResponseBody<'listIntents'>> =>
      (await this.call('listIntents', { ...opts, query })).body,
    /** Recomputes an intent's hash chain. */
    verify: async (eventId: string, opts?: CallOptions): Promise<ResponseBody<'verifyIntent'>> =>
      (await this.call('verifyIntent', { ...opts, params: { eventId } })).body,
    /** Counts by current status and by domain. */
    stats: async (opts?: CallOptions): Promise<ResponseBody<'intentStats'>> => (await this.call('intentStats', { ...opts })).body,
  };

  /**
   * The scheduled-task routes (/v1/tasks*): define a task (cron, interval or at trigger, an
   * agent, deliveries), change, pause, resume, delete or trigger it, and read its runs. Each
   * change answers the task as `get` shows it (next fire times, trigger in words, history).
   */
  readonly tasks = {
    /** Creates a task (every default filled in); a used task_id rejects with 409 task_exists, bad input with 400 naming each field. */
    create: async (body: BodyOf<'createTask'>, opts?: CallOptions): Promise<ResponseBody<'createTask'>> => (await this.call('createTask', { ...opts, body })).body,
    /** Tasks ordered by id (deleted ones left out), filtered by status, tag and enabled, paged by `cursor` (the previous page's next_cursor). */
    list: async (query?: QueryOf<'listTasks'>, opts?: CallOptions): Promise<ResponseBody<'listTasks'>> => (await this.call('listTasks', { ...opts, query })).body,
    /** One task with its next fire times, its trigger in words, its change history and its scheduler. */
    get: async (id: string, opts?: CallOptions): Promise<ResponseBody<'getTask'>> => (await this.call('getTask', { ...opts, params: { id } })).body,
    /** Changes any subset of the fields (`null` removes calendar, session_id or alert); the merged definition is validated as a create; a deleted task rejects with 409 task_deleted. */
    update: async (id: string, body: BodyOf<'patchTask'>, opts?: CallOptions): Promise<ResponseBody<'patchTask'>> =>
      (await this.call('patchTask', { ...opts, params: { id }, body })).body,
    /** Deletes a task: it stops firing; it, its history and its runs stay readable (`deleted: true`). */
    delete: async (id: string, opts?: CallOptions): Promise<ResponseBody<'deleteTask'>> => (await this.call('deleteTask', { ...opts, params: { id } })).body,
    /** Pauses a task: fire times while paused are not made up. */
    pause: async (id: string, opts?: CallOptions): Promise<ResponseBody<'pauseTask'>> => (await this.call('pauseTask', { ...opts, params: { id } })).body,
    /** Resumes a paused or auto-disabled task from now on. */
    resume: async (id: string, opts?: CallOptions): Promise<ResponseBody<'resumeTask'>> => (await this.call('resumeTask', { ...opts, params: { id } })).body,
    /** Runs a task now (also when paused) with a run id of its own: `{run_id, url}` (the answer is 202). */
    trigger: async (id: string, opts?: CallOptions): Promise<ResponseBody<'triggerTask'>> => (await this.call('triggerTask', { ...opts, params: { id } })).body,
    /** Runs every fire time in [from, to] once under its scheduled run id: `{started, already_run}` (the answer is 202); over the limit, a future `to` or from ≥ to rejects with 400 naming the field. */
    backfill: async (id: string, body: BodyOf<'backfillTask'>, opts?: CallOptions): Promise<ResponseBody<'backfillTask'>> =>
      (await this.call('backfillTask', { ...opts, params: { id }, body })).body,
    /** A task's runs, newest fire time first. */
    runs: async (id: string, query?: QueryOf<'listTaskRuns'>, opts?: CallOptions): Promise<ResponseBody<'listTaskRuns'>> =>
      (await this.call('listTaskRuns', { ...opts, params: { id }, query })).body,
    /** The rows the task's `table` delivery stored, one per run (the whole answer, summary uncut), newest first. */
    results: async (id: string, query?: QueryOf<'listTaskResults'>, opts?: CallOptions): Promise<ResponseBody<'listTaskResults'>> =>
      (await this.call('listTaskResults', { ...opts, params: { id }, query })).body,
    /** Checks the task's history rows against a checkpoint of the transparency log (`ok: false` names the first changed version). */
    verify: async (id: string, opts?: CallOptions): Promise<ResponseBody<'verifyTask'>> => (await this.call('verifyTask', { ...opts, params: { id } })).body,
  };

  /** Task runs across tasks (/v1/runs*). */
  readonly runs = {
    /** One run with every state it went through and its deliveries; the run id (`run/<task>/<time>`) is percent-encoded for you. */
    get: async (runId: string, opts?: CallOptions): Promise<ResponseBody<'getRun'>> => (await this.call('getRun', { ...opts, params: { id: runId } })).body,
    /** Runs by status and task; `status: 'needs_attention'` is the queue of runs that failed for good. */
    list: async (query?: QueryOf<'listRuns'>, opts?: CallOptions): Promise<ResponseBody<'listRuns'>> => (await this.call('listRuns', { ...opts, query })).body,
    /**
     * Reports an agent's result (the answer protocol object, optionally with `attempt`) for a run
     * that waits for it; the same result again answers the same outcome (`deduplicated: true`).
     * Rejects with 400 naming the field, 404, or 409 run_not_waiting / result_conflict.
     */
    reportResult: async (runId: string, body: BodyOf<'reportRunResult'>, opts?: CallOptions): Promise<ResponseBody<'reportRunResult'>> =>
      (await this.call('reportRunResult', { ...opts, params: { id: runId }, body })).body,
    /** Checks the run's log rows against a checkpoint of the transparency log (`ok: false` names the first changed row id). */
    verify: async (runId: string, opts?: CallOptions): Promise<ResponseBody<'verifyRun'>> => (await this.call('verifyRun', { ...opts, params: { id: runId } })).body,
  };

  /** Named events for delay and condition triggers (/v1/signals). */
  readonly signals = {
    /**
     * Sends a signal: stored (idempotent by `signal_id`), then delivered to every enabled task
     * whose trigger listens to `name`; answers `{signal_id, seq, at, deduplicated, delivered_to}` (202).
     * After a 503 or a lost answer, send it again with the same `signal_id`.
     */
    send: async (body: BodyOf<'sendSignal'>, opts?: CallOptions): Promise<ResponseBody<'sendSignal'>> => (await this.call('sendSignal', { ...opts, body })).body,
    /** Stored signals, newest first (`name`, `source`, `limit`, `cursor`); a bound key sees only those sent by keys within its bounds. */
    list: async (query?: QueryOf<'listSignals'>, opts?: CallOptions): Promise<ResponseBody<'listSignals'>> => (await this.call('listSignals', { ...opts, query })).body,
    /** One stored signal by its id (percent-encoded for you). */
    get: async (signalId: string, opts?: CallOptions): Promise<ResponseBody<'getSignal'>> => (await this.call('getSignal', { ...opts, params: { id: signalId } })).body,
  };

  /** The transparency log (/v1/log/*): its key, latest checkpoint and proofs. */
  readonly log = {
    key: async (opts?: CallOptions): Promise<string> => (await this.call('getLogKey', { ...opts })).body,
    /** The newest checkpoint with its cosignatures so far; `{ witnessed: 'true' }`: the newest that met the witness quorum. */
    checkpoint: async (query?: QueryOf<'getLogCheckpoint'>, opts?: CallOptions): Promise<string> => (await this.call('getLogCheckpoint', { ...opts, query: query ?? {} })).body,
    inclusion: async (query: QueryOf<'getInclusionProof'>, opts?: CallOptions): Promise<ResponseBody<'getInclusionProof'>> =>
      (await this.call('getInclusionProof', { ...opts, query })).body,
    consistency: async (query: QueryOf<'getConsistencyProof'>, opts?: CallOptions): Promise<ResponseBody<'getConsistencyProof'>> =>
      (await this.call('getConsistencyProof', { ...opts, query })).body,
  };

  /** Cron expressions checked before they are saved (/v1/schedules/preview). */
  readonly schedules = {
    /** The UTC fire times of a cron expression in a time zone after `from` (exclusive, default now), under the declared time-zone policy. */
    preview: async (query: QueryOf<'previewSchedule'>, opts?: CallOptions): Promise<ResponseBody<'previewSchedule'>> =>
      (await this.call('previewSchedule', { ...opts, query })).body,
  };

  /** Now in a zone, and whether today is a working day in a named calendar (/v1/time): the time context task runs get. */
  readonly time = {
    now: async (query?: QueryOf<'timeNow'>, opts?: CallOptions): Promise<ResponseBody<'timeNow'>> => (await this.call('timeNow', { ...opts, query })).body,
  };

  // ---- internals -------------------------------------------------------------------------

  private async send(method: string, path: string, body: string | Uint8Array | undefined, opts: CallOptions): Promise<RawResponse> {
    const headers: Record<string, string> = { accept: 'application/json, application/problem+json', ...this.options.headers };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    for (const [k, v] of Object.entries(opts.headers ?? {})) {
      // Header names are case-insensitive: the caller's spelling replaces ours.
      for (const mine of Object.keys(headers)) if (mine.toLowerCase() === k.toLowerCase()) delete headers[mine];
      headers[k] = v;
    }
    const signals = [opts.signal, this.options.timeoutMs ? AbortSignal.timeout(this.options.timeoutMs) : undefined].filter((s): s is AbortSignal => !!s);
    const res = await this.fetchImpl(this.baseUrl + path, {
      method,
      headers,
      body: body as RequestInit['body'],
      signal: signals.length > 1 ? AbortSignal.any(signals) : signals[0],
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON: keep the text */
    }
    return { status: res.status, body: parsed, text, headers: res.headers };
  }
}

// ---- helpers ----------------------------------------------------------------------------

/** Strings and numbers (and booleans) as query parameters, in the order given; undefined is left out. */
function queryString(query: Record<string, unknown> | undefined): string {
  if (!query) return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw new TypeError(`query parameter ${k} must be a string or a number`);
    p.append(k, String(v));
  }
  const s = p.toString();
  return s ? `?${s}` : '';
}

function asProblem(res: RawResponse): Problem {
  const parsed = ProblemSchema.safeParse(res.body);
  if (parsed.success) return res.body as Problem;
  const detail = typeof res.body === 'string' ? res.body.slice(0, 500) : preview(res.body);
  return { type: 'about:blank', title: `HTTP ${res.status}`, status: res.status, detail, code: res.status, msg: detail };
}

function checkContract(name: string, c: RouteContract, res: RawResponse, declared: boolean): void {
  const fail = (what: string) => {
    throw new TimekeeperContractError(name, res.status, what, res.body);
  };
  const type = res.headers.get('content-type') ?? '';
  if (declared) {
    const expected = c.contentType ?? 'application/json';
    if (!type.startsWith(expected)) fail(`content-type ${type || '(none)'}, expected ${expected}`);
    const r = c.responses[res.status].safeParse(expected === 'text/plain' ? res.text : res.body);
    if (!r.success) fail(issues(r.error));
    return;
  }
  if (!c.errors.includes(res.status)) fail(`status ${res.status} is not among the documented ${[...Object.keys(c.responses), ...c.errors].join(', ')}`);
  if (!/^application\/problem\+json/.test(type)) fail(`content-type ${type || '(none)'}, expected application/problem+json`);
  const r = ProblemSchema.safeParse(res.body);
  if (!r.success) fail(`not a problem: ${issues(r.error)}`);
  if ((res.body as Problem).status !== res.status) fail(`problem status ${(res.body as Problem).status} differs from the HTTP status`);
}

const issues = (e: z.ZodError) =>
  e.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`)
    .join('; ');

function preview(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 300 ? `${s.slice(0, 300)}…` : s;
}
