/**
 * The error catalogue: every refusal Timekeeper gives, by code, for every capability, and
 * every failure type its activities and workflows raise (`RunFailure`, `WakeFailure`, `LogFailure`).
 *
 * A `DomainError` carries its code, a message and the fields it concerns. It crosses the
 * workflow boundary as an `ApplicationFailure` whose `type` is the code and whose first
 * detail is the serialised error, so callers classify failures by code, never by message
 * text. HTTP statuses are not decided here: `api/problem.ts` maps codes to statuses per
 * surface. Sandbox-safe (imported by workflows).
 *
 * The codes are public (problem `type` URLs, the seed envelope, run reasons): a code that
 * reads oddly for a later use keeps its wire value, and the entry says what else it covers.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { JsonValue } from './canonical-json';

export const ErrorCode = {
  /** A request field is missing, malformed or out of range. */
  Validation: 'validation_error',
  /** The resource (session, route, ...) does not exist. */
  NotFound: 'not_found',
  SessionExists: 'session_exists',
  SessionArchived: 'session_archived',
  /**
   * An idempotency key sent again with other content: a session event's or end's
   * `idempotency_key`, an intent request's `Idempotency-Key` header, and a signal's
   * `signal_id` (a signal is idempotent by its id, so its id is its idempotency key:
   * `signalErrors.idReused`).
   */
  IdempotencyKeyReused: 'idempotency_key_reused',
  /** A client-chosen event id already names a different event. */
  EventIdConflict: 'event_id_conflict',
  /** Another writer changed the same chain at the same moment; nothing was written. */
  ConcurrencyConflict: 'concurrency_conflict',
  /** `expected_seq` is not the chain head; nothing was written. */
  WrongExpectedSeq: 'wrong_expected_seq',
  /** An intent cannot go from its current state to the one asked for (409 names both and the allowed next states). */
  InvalidTransition: 'invalid_transition',
  /** A client-chosen intent event_id is already taken. */
  IntentExists: 'intent_exists',
  /** An intent's dedupe_key already belongs to a done or still open intent. */
  DuplicateIntent: 'duplicate_intent',
  /** The API runs with DB_READ_ONLY=true: writes are refused, reads work. */
  ReadOnly: 'read_only',
  TooLarge: 'payload_too_large',
  Unauthorized: 'unauthorized',
  Forbidden: 'forbidden',
  /** Too many requests in flight: retry after the `Retry-After` delay. */
  RateLimited: 'rate_limited',
  /** A dependency (worker, Temporal, PostgreSQL) did not answer; retrying can succeed. */
  Unavailable: 'unavailable',
  /** The event database refused the write or belongs to another Timekeeper; nothing was stored. */
  WriteFailed: 'write_failed',
  Internal: 'internal_error',
  /** A task id already names a task (tasks). */
  TaskExists: 'task_exists',
  /** The task was deleted: its history and runs stay readable, it can no longer change. */
  TaskDeleted: 'task_deleted',
  /** A run result arrived while the run does not wait for one (finished, between attempts, or an agent that answers directly). */
  RunNotWaiting: 'run_not_waiting',
  /** A run result contradicts the run: another task's task_id, or a different result already accepted for the attempt. */
  ResultConflict: 'result_conflict',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const CODES = new Set<string>(Object.values(ErrorCode));

/**
 * Why a task run's attempt failed: the `type` of the ApplicationFailure the agent call
 * (activities/tasks/index.ts) or the run workflow (workflows/tasks/run.ts) raises. Not refusals of
 * a request, so no HTTP status: the run log shows the type as the first word of the attempt's
 * reason (`agent_error: the webhook answered HTTP 500`), which operators and tests read.
 */
export const RunFailure = {
  /** The agent did not answer (or its later result did not arrive) within timeout_s. */
  TimedOut: 'timed_out',
  /** The agent answered with `status: failed`. */
  AgentReportedFailure: 'agent_reported_failure',
  /** The agent (or its Gateway) answered a non-2xx status or an answer without content. */
  AgentError: 'agent_error',
  /** The agent's host could not be reached (connection refused, DNS, timeout). */
  AgentUnreachable: 'agent_unreachable',
  /** The worker lacks what the agent definition names (a token or API key environment variable). */
  AgentMisconfigured: 'agent_misconfigured',
  /** The agent's answer did not follow the protocol, also when asked again. */
  InvalidAnswer: 'invalid_answer',
  /** The SSRF guard refused the outgoing request (a private or local address). */
  OutboundRefused: 'outbound_refused',
  /** A sealed HMAC secret of the definition could not be opened by this worker. */
  SecretUnreadable: 'secret_unreadable',
} as const;
export type RunFailure = (typeof RunFailure)[keyof typeof RunFailure];

/**
 * Why an intent's wake hook failed (activities/intents/index.ts wakeAgent): Temporal retries
 * `Failed` (overload, outage) with backoff and gives up on `Refused` (a 4xx other than 408
 * and 429: the request itself is wrong). Seen in Temporal's history and the worker log only.
 */
export const WakeFailure = {
  Refused: 'WakeRefused',
  Failed: 'WakeFailed',
} as const;
export type WakeFailure = (typeof WakeFailure)[keyof typeof WakeFailure];

/**
 * Why the log builder's activity failed (activities/tlog/index.ts buildLog): `WrongDatabase`, a
 * worker connected to another event database than the builder's, is retried until a worker of
 * the right database takes the task. Seen in Temporal's history and the worker log only.
 */
export const LogFailure = {
  WrongDatabase: 'wrong_database',
} as const;
export type LogFailure = (typeof LogFailure)[keyof typeof LogFailure];
export const isErrorCode = (s: unknown): s is ErrorCode => typeof s === 'string' && CODES.has(s);

export interface FieldError {
  field: string;
  reason: string;
}

/** What a DomainError looks like on the wire (workflow failure details, activity outcomes). */
export interface ErrorDetail {
  code: ErrorCode;
  message: string;
  errors?: FieldError[];
  /** Code-specific facts, e.g. `current_head` for wrong_expected_seq. */
  extra?: { [k: string]: JsonValue };
  retryAfterS?: number;
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly errors: FieldError[] = [],
    readonly extra?: { [k: string]: JsonValue },
    /** Seconds after which a retry can succeed (the API sends it as `Retry-After`); set for refusals under load. */
    readonly retryAfterS?: number,
  ) {
    super(message);
    this.name = 'DomainError';
  }

  /** The same error with a `Retry-After` hint. */
  withRetryAfter(seconds: number): DomainError {
    return new DomainError(this.code, this.message, this.errors, this.extra, seconds);
  }

  /** The same error with more code-specific facts (e.g. `may_be_stored`). */
  withExtra(extra: { [k: string]: JsonValue }): DomainError {
    return new DomainError(this.code, this.message, this.errors, { ...this.extra, ...extra }, this.retryAfterS);
  }

  /** A single-field refusal: "`field` `reason`". */
  static field(code: ErrorCode, field: string, reason: string): DomainError {
    return new DomainError(code, `${field} ${reason}`, [{ field, reason }]);
  }

  static validation(field: string, reason: string): DomainError {
    return DomainError.field(ErrorCode.Validation, field, reason);
  }

  /** The same error with a message of its own (the field errors stay). */
  withMessage(message: string): DomainError {
    return new DomainError(this.code, message, this.errors, this.extra, this.retryAfterS);
  }

  toDetail(): ErrorDetail {
    return {
      code: this.code,
      message: this.message,
      ...(this.errors.length ? { errors: this.errors } : {}),
      ...(this.extra ? { extra: this.extra } : {}),
      ...(this.retryAfterS !== undefined ? { retryAfterS: this.retryAfterS } : {}),
    };
  }

  static fromDetail(d: ErrorDetail): DomainError {
    return new DomainError(d.code, d.message, d.errors ?? [], d.extra, d.retryAfterS);
  }

  /** The failure a workflow throws (update validators, update handlers) for this error. */
  toFailure(): ApplicationFailure {
    return ApplicationFailure.create({ type: this.code, message: this.message, nonRetryable: true, details: [this.toDetail()] });
  }

  /**
   * The domain error a failure carries, when it was raised from a DomainError (its type is a
   * catalogue code and its first detail the serialised error); undefined for anything else.
   */
  static fromFailure(f: unknown): DomainError | undefined {
    if (!(f instanceof ApplicationFailure) || !isErrorCode(f.type)) return undefined;
    const d = f.details?.[0] as Partial<ErrorDetail> | undefined;
    if (d && d.code === f.type && typeof d.message === 'string') return DomainError.fromDetail(d as ErrorDetail);
    return new DomainError(f.type, f.message);
  }
}
