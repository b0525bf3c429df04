/**
 * Dependency checks that answer within a deadline each, for the health answers (/readyz,
 * OML's /api/health): every check runs at once and a check that has not answered when its
 * deadline passes reads "timed out after N ms" (the work goes on, bounded by its own
 * timeouts), so the answer comes in about that time whatever is down, and says which timed out.
 * The PostgreSQL and Temporal checks themselves are here too: both answers use them.
 */
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { probeDatabase } from './database-probe';

export const TIMED_OUT = Symbol('timed out');
export type CheckResult = string | typeof TIMED_OUT;
/** One check: "ok", the reason it is not, or TIMED_OUT (its own deadline said so). */
export type Check = () => Promise<CheckResult>;

export interface CheckResults {
  /** Each check's "ok", reason, or "timed out after N ms". */
  checks: Record<string, string>;
  /** The checks whose deadline passed. */
  timedOut: string[];
}

export const reasonOf = (e: unknown) => (e as Error)?.message || String(e);
/** gRPC DEADLINE_EXCEEDED (status 4): the call's own deadline, the same as ours. */
const isDeadline = (e: unknown) => (e as { code?: unknown })?.code === 4;

/** `p`, or TIMED_OUT once `ms` have passed. */
function within<T>(p: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

/** Runs every check at once, each within `ms`. */
export async function runChecks(checks: Record<string, Check>, ms: number): Promise<CheckResults> {
  const names = Object.keys(checks);
  const results = await Promise.all(names.map((n) => within(checks[n](), ms)));
  const out: Record<string, string> = {};
  const timedOut: string[] = [];
  names.forEach((n, i) => {
    const r = results[i];
    if (r === TIMED_OUT) timedOut.push(n);
    out[n] = r === TIMED_OUT ? `timed out after ${ms} ms` : r;
  });
  return { checks: out, timedOut };
}

/** The database probe (SELECT 1) answers; otherwise `failed(reason)`. */
export const postgresCheck =
  (pool: Pool, failed = (reason: string) => `not reachable: ${reason}`): Check =>
  () =>
    probeDatabase(pool).then(
      () => 'ok',
      (e) => failed(reasonOf(e)),
    );

/** GetSystemInfo answers; the gRPC call gets the deadline too, so a hung server does not keep calls open behind the answer. */
export const temporalCheck =
  (client: Client, ms: number, failed = (reason: string) => `not reachable: ${reason}`): Check =>
  () =>
    client.connection.withDeadline(Date.now() + ms, () => client.connection.workflowService.getSystemInfo({})).then(
      () => 'ok',
      (e) => (isDeadline(e) ? TIMED_OUT : failed(reasonOf(e))),
    );
