/**
 * The engine's floor for the benchmarks: a workflow that does nothing but answer, with no
 * activity, no database and no search attributes. Timed on the same Temporal server at the
 * same concurrency as Timekeeper, its latencies are what Temporal and the SDK cost alone on
 * this machine at that moment; the benches print Timekeeper's figures as ratios to it.
 * Bench-only: bundled and run by the bench's own worker (bench/floor/worker.ts), on its own
 * task queue, never registered by the production worker (workflows/ does not import it).
 *
 * - bench/timeline.ts: the no-op Update `floor` (like an append answering with its receipt),
 *   on a workflow started without input that stays open; and `floorLocal`, whose handler
 *   awaits one no-op local activity: the least any design costs in which the workflow itself
 *   writes (an activity result must come back into the workflow before the Update answers).
 *   `floorDurable` (bench/floor/durable.ts) awaits one local activity that commits one row to
 *   PostgreSQL, and is called through a plain HTTP server in its own process: the least a REST
 *   service that stores each append durably through a workflow can cost. `floorDurableActivity`
 *   commits the same row through a regular activity instead: the textbook design, the one
 *   Timekeeper's single writer did not choose (bench/timeline.ts's `paired` scenario).
 * - bench/tasks.ts: started by a client at each fire time with `steps: 0, echo`, it runs one
 *   no-op local activity (whose arrival the bench times, as the stand-in agent times a run's
 *   call) and completes: what starting and finishing one run costs the engine.
 * - bench/intents.ts: shaped like an intent's life: update-with-start `open`, update `step`,
 *   update `finish` that completes the run; `steps: 0` completes in its first workflow task
 *   (the bare start).
 */
import { allHandlersFinished, condition, defineUpdate, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';

/** The floor worker's one activity: returns its argument. */
export interface FloorActivities {
  echo(x: number): Promise<number>;
}
const { echo } = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '10s' });

/** One append of the durable floor: the row its activity commits. */
export interface DurableRow {
  id: string;
  k: number;
  content: unknown;
}
/** The durable floor's activity (registered only where the bench has a database): commits one row, returns k. */
export interface DurableFloorActivities {
  store(row: DurableRow): Promise<number>;
}
const { store } = proxyLocalActivities<DurableFloorActivities>({ startToCloseTimeout: '10s' });
/** The same commit as a regular activity (dispatched through the server's matching): the textbook shape, the next-best design to the local activity. */
const { store: storeAsActivity } = proxyActivities<DurableFloorActivities>({ startToCloseTimeout: '10s' });

/** Returns its argument, without touching anything. */
export const floorUpdate = defineUpdate<number, [number]>('floor');
/** Returns its argument through one no-op local activity. */
export const floorLocalUpdate = defineUpdate<number, [number]>('floorLocal');
/** Commits one row through one local activity and returns its k. */
export const floorDurableUpdate = defineUpdate<number, [DurableRow]>('floorDurable');
/** Commits one row through one regular activity and returns its k. */
export const floorDurableActivityUpdate = defineUpdate<number, [DurableRow]>('floorDurableActivity');
export const openUpdate = defineUpdate<number, []>('open');
export const stepUpdate = defineUpdate<number, []>('step');
export const finishUpdate = defineUpdate<number, []>('finish');

export async function floorWorkflow(input: { steps?: number; echo?: number } = {}): Promise<number> {
  let n = 0;
  // bench/tasks.ts: one no-op local activity first, as a run's one local activity calls its agent (the bench times its arrival).
  if (input.echo !== undefined) await echo(input.echo);
  let finished = input.steps === 0;
  setHandler(floorUpdate, (x: number) => x);
  setHandler(floorLocalUpdate, (x: number) => echo(x));
  setHandler(floorDurableUpdate, (row: DurableRow) => store(row));
  setHandler(floorDurableActivityUpdate, (row: DurableRow) => storeAsActivity(row));
  setHandler(openUpdate, () => ++n);
  setHandler(stepUpdate, () => ++n);
  setHandler(finishUpdate, () => {
    finished = true;
    return ++n;
  });
  // Without `finish` it stays open until the server drops it (the timeline bench's are few).
  await condition(() => finished && allHandlersFinished());
  return n;
}
