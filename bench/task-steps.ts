/**
 * The worker's first-attempt step timings for bench/tasks.ts: scraped from its
 * WORKER_METRICS_PORT (the histogram timekeeper_task_first_attempt_step_seconds, lib/metrics.ts)
 * before and after a scenario, and the difference summarised per step. A tiny parser of the
 * Prometheus text format for one histogram, rather than a library: the bench needs three
 * series of one metric.
 */
const METRIC = 'timekeeper_task_first_attempt_step_seconds';

/** Per step: cumulative counts per bucket upper bound, the sum and the count. */
export type Steps = Map<string, { buckets: Map<string, number>; sum: number; count: number }>;

export interface StepFigures {
  step: string;
  count: number;
  meanMs: number;
  /** Upper bounds (seconds) of the buckets holding the 50th and 99th percentile. */
  p50: string;
  p99: string;
}

export async function scrapeSteps(port: number): Promise<Steps> {
  const steps: Steps = new Map();
  let text: string;
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    text = await res.text();
  } catch {
    return steps;
  }
  const line = new RegExp(`^${METRIC}_(bucket|sum|count)\\{([^}]*)\\} (\\S+)$`);
  for (const l of text.split('\n')) {
    const m = line.exec(l);
    if (!m) continue;
    const labels = Object.fromEntries([...m[2].matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    const s = steps.get(labels.step) ?? { buckets: new Map(), sum: 0, count: 0 };
    steps.set(labels.step, s);
    if (m[1] === 'bucket') s.buckets.set(labels.le, Number(m[3]));
    else if (m[1] === 'sum') s.sum = Number(m[3]);
    else s.count = Number(m[3]);
  }
  return steps;
}

export function stepDelta(before: Steps, after: Steps): StepFigures[] {
  const out: StepFigures[] = [];
  for (const [step, a] of after) {
    const b = before.get(step);
    const count = a.count - (b?.count ?? 0);
    if (count <= 0) continue;
    const sum = a.sum - (b?.sum ?? 0);
    const cumulative = [...a.buckets].map(([le, n]) => [le, n - (b?.buckets.get(le) ?? 0)] as const);
    const at = (p: number) => cumulative.find(([, n]) => n >= (p / 100) * count)?.[0] ?? '+Inf';
    out.push({ step, count, meanMs: (sum / count) * 1000, p50: at(50), p99: at(99) });
  }
  const order = ['fire', 'queued', 'context', 'agent', 'log', 'deliver', 'announce'];
  return out.sort((x, y) => order.indexOf(x.step) - order.indexOf(y.step));
}
