/**
 * Structured logs (pino): one JSON object per line on stdout, human-readable through
 * pino-pretty only when stdout is a terminal. Each HTTP request runs in a request context
 * (AsyncLocalStorage) holding its request id, so every line logged while serving it, and
 * the ids the clients put into workflow inputs (AppendRequest.requestId,
 * TransitionRequest.requestId) for the writer activities' lines, carry `request_id`.
 *
 * Not for workflow code or lib/domain (Node built-ins, I/O): workflows log through the
 * Temporal runtime logger, which bin/run.ts forwards here.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import pino, { type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import { LIMITS } from './domain/limits';

export type { Logger } from 'pino';

export interface LogOptions {
  level?: LevelWithSilent;
  /** Where lines go (tests capture them); default stdout, pretty-printed on a terminal. */
  destination?: DestinationStream;
  /** Force pretty output on or off; default: when stdout is a TTY. */
  pretty?: boolean;
}

function build(opts: LogOptions = {}): Logger {
  const base = { level: opts.level ?? 'info', base: { service: 'timekeeper' }, timestamp: pino.stdTimeFunctions.isoTime };
  if (opts.destination) return pino(base, opts.destination);
  if (opts.pretty ?? process.stdout.isTTY === true) {
    return pino({ ...base, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' } } });
  }
  return pino(base);
}

let root: Logger = build();

/** Replaces the process's logger (bin/run.ts with LOG_LEVEL; tests with a capturing destination). */
export function configureLogger(opts: LogOptions): Logger {
  root = build(opts);
  return root;
}

interface RequestContext {
  requestId: string;
  log: Logger;
}
const context = new AsyncLocalStorage<RequestContext>();

/** The logger of the current request (with its request_id), or the process's logger. */
export function log(): Logger {
  return context.getStore()?.log ?? root;
}

/** A logger for work done on behalf of a request whose id travelled in a workflow input. */
export function logFor(requestId: string | undefined, bindings: Record<string, unknown> = {}): Logger {
  return root.child(requestId ? { request_id: requestId, ...bindings } : bindings);
}

/** The current request's id, for the clients to hand on into workflow inputs. */
export function currentRequestId(): string | undefined {
  return context.getStore()?.requestId;
}

/** X-Request-Id values we accept from a caller: printable, no spaces, bounded. */
export const REQUEST_ID_RE = new RegExp(`^[A-Za-z0-9._:/@+=-]{1,${LIMITS.requestIdMaxChars}}$`);

/** The caller's X-Request-Id when it is acceptable, else a new one. */
export function requestIdFrom(header: string | string[] | undefined): string {
  const v = Array.isArray(header) ? header[0] : header;
  return v !== undefined && REQUEST_ID_RE.test(v) ? v : randomUUID();
}

/** Runs `fn` (and everything it awaits) in the context of request `requestId`. */
export function withRequest<T>(requestId: string, fn: () => T): T {
  return context.run({ requestId, log: root.child({ request_id: requestId }) }, fn);
}
