/**
 * The engine's floor for the timeline bench: a workflow that does nothing but answer a no-op
 * Update. Bench-only: bundled and run by bench/floor/worker.ts inside the bench process, on its
 * own task queue, never registered by the production worker (workflows/ does not import it).
 */
import { condition, defineUpdate, setHandler } from '@temporalio/workflow';

/** Returns its argument, like an append answering with its receipt, without touching anything. */
export const floorUpdate = defineUpdate<number, [number]>('floor');

export async function floorWorkflow(): Promise<void> {
  setHandler(floorUpdate, (n: number) => n);
  // Open until the server drops it: the bench never completes or terminates these (they are few).
  await condition(() => false);
}
