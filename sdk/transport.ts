/**
 * The typed client's transport: a route called by name from its contract (method, path,
 * parameters, query, body), the answer typed by the contract's responses (and, with
 * `validateResponses`, checked against them), any undocumented status a TimekeeperApiError;
 * `raw()` for requests the contract does not describe. sdk/client.ts puts the facades on it.
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
export type QueryOf<N extends RouteName> = QueryValues<InputOf<Routes[N], 'query'>>;
export type BodyOf<N extends RouteName> = InputOf<Routes[N], 'body'>;
/** Calls the API's routes by name; TimekeeperClient adds the facades. */
export class Transport {
  readonly baseUrl: string;
  private readonly fetchImpl: (input: string, init: RequestInit) => Promise<Response>;

  constructor(readonly options: TimekeeperClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    // Called as a plain function: a browser's fetch refuses to run with another `this`.
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
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
