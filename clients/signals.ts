/**
 * A signal sent to Timekeeper: stored once by its signal_id (the same id with other content is
 * refused), then delivered to the schedulers of the tasks that listen to it: one
 * signal-with-start per task (clients/task-scheduler.ts, signal `event`), so a scheduler that is
 * not running is started from the task's stored state and still takes the signal. Delivery is
 * at-least-once (a retried POST /v1/signals delivers again); schedulers drop signal ids they
 * have seen, and runs are named from the signal, so a run still starts at most once.
 */
import { Client } from '@temporalio/client';
import type { AgentBounds } from '../lib/domain/agent-bounds';
import { DomainError, ErrorCode } from '../lib/domain/errors';
import { signalErrors, type SignalEvent } from '../lib/domain/signals';
import type { Listener, SignalStore, StoredSignal } from '../lib/store/signals';
import { RunQueues, signalEventSignal } from '../workflows/tasks/messages';
import { signalWithStartScheduler } from './task-scheduler';

export interface SignalClientOptions {
  client: Client;
  /** The main task queue: schedulers run here. */
  taskQueue: string;
  runQueues: RunQueues;
  /** Where signals are stored and their listening tasks found. */
  store: SignalStore;
}

/** A sent signal as stored (`existed`: already stored by an earlier send of the same signal_id), and the task ids it reached. */
export interface SentSignal {
  signal: StoredSignal;
  existed: boolean;
  deliveredTo: string[];
}

export class SignalClient {
  constructor(private readonly opts: SignalClientOptions) {}

  /**
   * Stores `sent` (from the API, within the sender key's `bounds`: such a signal reaches only
   * its agents' tasks, now and when a scheduler catches up on stored signals), then delivers the
   * stored signal to its listeners. A retry carries the same content (and sender bounds); the
   * same id with other content is a different signal, refused with nothing stored. `atGiven`:
   * the sender named the signal's time, so a retry must name the same one.
   */
  async send(sent: SignalEvent, bounds: AgentBounds | undefined, atGiven: boolean): Promise<SentSignal> {
    const { store } = this.opts;
    const { signal, existed } = await store.insert(sent, 'api', bounds);
    const same = sameBounds(signal.bounds, bounds) && signal.name === sent.name && JSON.stringify(signal.value) === JSON.stringify(sent.value) && sameRecord(signal.values, sent.values) && (!atGiven || signal.atMs === sent.atMs);
    if (existed && (!same || signal.source !== 'api')) throw signalErrors.idReused(sent.signal_id);
    const event: SignalEvent = { signal_id: signal.signal_id, name: signal.name, value: signal.value, values: signal.values, atMs: signal.atMs };
    const deliveredTo = await this.deliver(event, await store.listeners(signal.name, signal.bounds));
    return { signal, existed, deliveredTo };
  }

  /** Delivers to every listener; answers the task ids reached. A scheduler that cannot be reached fails the whole call (503: send again with the same signal_id). */
  async deliver(event: SignalEvent, listeners: Listener[]): Promise<string[]> {
    const failures: string[] = [];
    await Promise.all(
      listeners.map(async (row) => {
        try {
          await signalWithStartScheduler(this.opts, row.task_id, { version: row.version, definition: row.definition, enabled: row.enabled, deleted: row.deleted }, signalEventSignal, event);
        } catch (err) {
          failures.push(`${row.task_id}: ${(err as Error).message}`);
        }
      }),
    );
    if (failures.length) {
      throw new DomainError(
        ErrorCode.Unavailable,
        `signal ${event.signal_id} is stored, but ${failures.length} task scheduler(s) could not be reached (${failures.join('; ').slice(0, 500)}); send it again with the same signal_id to deliver it`,
      );
    }
    return listeners.map((r) => r.task_id).sort();
  }
}

function sameBounds(a: AgentBounds | undefined, b: AgentBounds | undefined): boolean {
  return JSON.stringify(a && [a.exact, a.prefixes]) === JSON.stringify(b && [b.exact, b.prefixes]);
}

function sameRecord(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && JSON.stringify(a[k]) === JSON.stringify(b[k]));
}
