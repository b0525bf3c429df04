/**
 * The engine's floor for bench/intents.ts: a workflow that does nothing but answer, shaped like
 * an intent's life (update-with-start `open`, update `step`, update `finish` that completes the
 * run) with no activity, no database and no search attributes. Timed on the same Temporal
 * server at the same concurrency as the intents, its latencies are what Temporal and the SDK
 * cost alone on this machine at that moment; the bench prints the intents' figures as ratios
 * to it. Bundled and run by the bench's own worker, never by Timekeeper's.
 */
import { allHandlersFinished, condition, defineUpdate, setHandler } from '@temporalio/workflow';

export const openUpdate = defineUpdate<number, []>('open');
export const stepUpdate = defineUpdate<number, []>('step');
export const finishUpdate = defineUpdate<number, []>('finish');

/** `steps: 0` completes in its first workflow task (the bare start); otherwise it waits for `finish`. */
export async function floorWorkflow(input: { steps: number }): Promise<number> {
  let n = 0;
  let finished = input.steps === 0;
  setHandler(openUpdate, () => ++n);
  setHandler(stepUpdate, () => ++n);
  setHandler(finishUpdate, () => {
    finished = true;
    return ++n;
  });
  await condition(() => finished && allHandlersFinished());
  return n;
}
