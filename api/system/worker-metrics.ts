/**
 * Under `npm start` the worker is a supervised child process with its own metrics registry
 * (appends, intent transitions, task runs, deliveries are counted where the activities run).
 * The API's GET /metrics adds the child's families to its own, so one scrape still shows the
 * whole system. Families the API already has (process_*, nodejs_*: per process, same names)
 * are left out of the child's part: one exposition may hold each family once.
 *
 * Hand-written on purpose: prom-client's AggregatorRegistry needs node:cluster workers, and
 * this is a plain child process reached over its WORKER_METRICS_PORT.
 */
import { LIMITS } from '../../lib/domain/limits';

/**
 * This process's exposition with the child's merged in. Every family is defined in both
 * registries (lib/metrics.ts is shared), but each is observed in one place: a family this
 * process has samples of (HTTP, health, process_*) is its own; one it has none of (appends,
 * intents, task runs) comes from the child. Only this process's part when the child does not answer.
 */
export async function mergeWorkerMetrics(url: string, own: string, authorization?: string): Promise<string> {
  let text: string;
  try {
    // The child checks the same keys: the scraper's own key (already checked here) goes along.
    const r = await fetch(url, { signal: AbortSignal.timeout(LIMITS.workerMetricsScrapeMs), headers: authorization ? { authorization } : {} });
    if (!r.ok) return own;
    text = await r.text();
  } catch {
    return own; // restarting: its series come back with it (counters restart from 0, as Prometheus expects)
  }
  const fromChild = withoutFamilies(text, familiesWithSamples(own));
  const childNames = new Set([...fromChild.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]));
  return withoutFamilies(own, childNames) + fromChild;
}

/** The families of an exposition that have at least one sample line (read from the text: one rendering per scrape). */
export function familiesWithSamples(text: string): Set<string> {
  const found = new Set<string>();
  let family: string | undefined;
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+)/.exec(line);
    if (type) family = type[1];
    else if (family && line && !line.startsWith('#')) found.add(family);
  }
  return found;
}

/** Drops every block (# HELP, # TYPE and samples) of a family in `own`. */
export function withoutFamilies(text: string, own: ReadonlySet<string>): string {
  const out: string[] = [];
  let keep = true;
  for (const line of text.split('\n')) {
    const meta = /^# (?:HELP|TYPE) (\S+)/.exec(line);
    if (meta) keep = !own.has(meta[1]);
    if (keep && line) out.push(line);
  }
  return out.length ? `${out.join('\n')}\n` : '';
}
