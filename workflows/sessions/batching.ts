/** How the session workflow cuts its queue into write batches. Pure, so it is unit-tested alone. */
import { LIMITS } from '../../lib/domain/limits';

export interface Sized {
  /** Content size in bytes (any consistent measure). */
  bytes: number;
}

/**
 * Removes and returns the next batch from the front of the queue: at most `maxEvents`
 * items and `maxBytes` of content, but always at least one item, so a single event larger
 * than the byte bound still goes (alone).
 */
export function takeBatch<T extends Sized>(queue: T[], maxEvents: number = LIMITS.appendBatchEvents, maxBytes: number = LIMITS.appendBatchBytes): T[] {
  let n = 0;
  let bytes = 0;
  while (n < queue.length && n < maxEvents && (n === 0 || bytes + queue[n].bytes <= maxBytes)) {
    bytes += queue[n].bytes;
    n++;
  }
  return queue.splice(0, n);
}
