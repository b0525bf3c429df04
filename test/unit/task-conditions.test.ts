/**
 * The pure side of delay and condition triggers (lib/domain/tasks/conditions.ts,
 * signal-triggers.ts, signals.ts): sustained comparisons (for_s), windows in a zone,
 * all/any, cooldown, run-outcome leaves, delay dedupe and the run ids they derive.
 */
import { applySignal, evaluate, inWindow, initialConditionState, nextWindowEdge, step, conditionProblems, type ConditionTrigger, type ConditionState } from '../../lib/domain/tasks/conditions';
import { dueAt, nextWakeMs, signalStateFor, takeSignal } from '../../lib/domain/tasks/signal-triggers';
import { dedupeKey, delayProblems, type DelayTrigger, type SignalEvent } from '../../lib/domain/signals';

const T0 = Date.parse('2026-03-09T01:00:00Z'); // Monday 09:00 in Asia/Shanghai
const s = (n: number) => n * 1000;
let ids = 0;
const ev = (name: string, value: SignalEvent['value'], atMs: number, values: SignalEvent['values'] = {}): SignalEvent => ({ signal_id: `sig-${ids++}`, name, value, values, atMs });

const cond = (when: ConditionTrigger['when'], extra: Partial<ConditionTrigger> = {}): ConditionTrigger => ({ type: 'condition', when, timezone: 'UTC', delay_s: 0, cooldown_s: 0, ...extra });
const feed = (c: ConditionTrigger, st: ConditionState, e: SignalEvent) => step(c, applySignal(c, st, e), e.atMs);

describe('for_s: a comparison must hold for that long, by signal time', () => {
  const c = cond({ signal: 'error_rate', op: '>', value: 0.05, for_s: 180 });

  test('true for less than for_s does not fire; its deadline is the next check', () => {
    const r = feed(c, initialConditionState(T0), ev('error_rate', 0.07, T0));
    expect(r.firedAtMs).toBeUndefined();
    expect(r.nextCheckMs).toBe(T0 + s(180));
    // Still true at +60 s: still waiting for the same deadline.
    const r2 = feed(c, r.state, ev('error_rate', 0.09, T0 + s(60)));
    expect(r2.firedAtMs).toBeUndefined();
    expect(r2.nextCheckMs).toBe(T0 + s(180));
    // The timer evaluates at the deadline itself: it fires there, whenever the scheduler woke.
    const r3 = step(c, r2.state, T0 + s(180));
    expect(r3.firedAtMs).toBe(T0 + s(180));
  });

  test('a false reading in between restarts the streak', () => {
    let st = feed(c, initialConditionState(T0), ev('error_rate', 0.07, T0)).state;
    st = feed(c, st, ev('error_rate', 0.01, T0 + s(100))).state;
    const r = feed(c, st, ev('error_rate', 0.08, T0 + s(120)));
    expect(r.nextCheckMs).toBe(T0 + s(300));
    expect(step(c, r.state, T0 + s(299)).firedAtMs).toBeUndefined();
    expect(step(c, r.state, T0 + s(300)).firedAtMs).toBe(T0 + s(300));
  });

  test('a signal older than the latest of its name is ignored; `field` reads values', () => {
    const byField = cond({ signal: 'health', field: 'status', op: '==', value: 'down' });
    let st = applySignal(byField, initialConditionState(T0), ev('health', null, T0 + s(10), { status: 'up' }));
    st = applySignal(byField, st, ev('health', null, T0, { status: 'down' }));
    expect(evaluate(byField, st, T0 + s(20)).holds).toBe(false);
    st = applySignal(byField, st, ev('health', null, T0 + s(30), { status: 'down' }));
    expect(evaluate(byField, st, T0 + s(30)).holds).toBe(true);
  });
});

describe('windows in the trigger zone', () => {
  const w = { days: [1, 2, 3, 4, 5], from: '09:00', to: '18:00' };
  test('working hours in Asia/Shanghai, weekdays only', () => {
    expect(inWindow(w, T0, 'Asia/Shanghai')).toBe(true); // Mon 09:00
    expect(inWindow(w, T0 - 1, 'Asia/Shanghai')).toBe(false); // Mon 08:59:59.999
    expect(inWindow(w, T0 + s(9 * 3600), 'Asia/Shanghai')).toBe(false); // Mon 18:00
    expect(inWindow(w, T0 - s(2 * 86400), 'Asia/Shanghai')).toBe(false); // Sat 09:00
    expect(inWindow(w, T0, 'UTC')).toBe(false); // 01:00 UTC
  });
  test('a window across midnight belongs to the day it starts on', () => {
    const night = { days: [5], from: '22:00', to: '06:00' }; // Friday night
    const fri23 = Date.parse('2026-03-13T23:00:00Z');
    expect(inWindow(night, fri23, 'UTC')).toBe(true);
    expect(inWindow(night, fri23 + s(4 * 3600), 'UTC')).toBe(true); // Sat 03:00
    expect(inWindow(night, fri23 - s(86400) + s(4 * 3600), 'UTC')).toBe(false); // Fri 03:00 (Thursday's night)
  });
  test('the next edge is the next local from/to, across a DST change', () => {
    expect(nextWindowEdge(w, T0 - s(3600), 'Asia/Shanghai')).toBe(T0);
    expect(nextWindowEdge(w, T0, 'Asia/Shanghai')).toBe(T0 + s(9 * 3600));
    // New York springs forward on 2026-03-08: 09:00 EDT is 13:00 UTC.
    expect(nextWindowEdge(w, Date.parse('2026-03-08T20:00:00Z'), 'America/New_York')).toBe(Date.parse('2026-03-08T22:00:00Z')); // 18:00 EDT
    expect(nextWindowEdge(w, Date.parse('2026-03-08T23:00:00Z'), 'America/New_York')).toBe(Date.parse('2026-03-09T13:00:00Z'));
  });
});

describe('all / any and run outcomes', () => {
  const diag = cond(
    { all: [{ task_id: 'crawler', status: 'failed', consecutive: 3 }, { window: { days: [1, 2, 3, 4, 5], from: '09:00', to: '18:00' } }] },
    { timezone: 'Asia/Shanghai' },
  );
  const outcome = (streak: number, status: 'failed' | 'success', at: number) => ev('task_run:crawler', streak, at, { status, streak, run_id: `r${streak}` });

  test('task X failed 3 times in a row, and it is working hours', () => {
    let r = feed(diag, initialConditionState(T0), outcome(2, 'failed', T0 + s(60)));
    expect(r.firedAtMs).toBeUndefined();
    r = feed(diag, r.state, outcome(3, 'failed', T0 + s(120)));
    expect(r.firedAtMs).toBe(T0 + s(120));
  });

  test('outside the window it waits for the window to open, then fires at the edge', () => {
    const sat = T0 - s(2 * 86400) + s(3600); // Saturday 10:00 Shanghai
    const r = feed(diag, initialConditionState(sat), outcome(3, 'failed', sat));
    expect(r.firedAtMs).toBeUndefined();
    // Sunday 00:00 (days change there) comes first; Monday 09:00 is where it holds.
    let st = r.state;
    let next = r.nextCheckMs!;
    let fired: number | undefined;
    for (let i = 0; i < 10 && fired === undefined; i++) {
      const x = step(diag, st, next);
      st = x.state;
      fired = x.firedAtMs;
      next = x.nextCheckMs!;
    }
    expect(fired).toBe(T0);
  });

  test('any: one branch is enough', () => {
    const c = cond({ any: [{ signal: 'a', op: '>=', value: 10 }, { signal: 'b', op: '==', value: true }] });
    expect(feed(c, initialConditionState(T0), ev('b', true, T0)).firedAtMs).toBe(T0);
    expect(feed(c, initialConditionState(T0), ev('a', 9, T0)).firedAtMs).toBeUndefined();
  });
});

describe('cooldown', () => {
  test('cooldown 0: fires again only after the condition was false in between', () => {
    const c = cond({ signal: 'x', op: '>', value: 1 });
    let r = feed(c, initialConditionState(T0), ev('x', 5, T0));
    expect(r.firedAtMs).toBe(T0);
    r = feed(c, r.state, ev('x', 6, T0 + s(10)));
    expect(r.firedAtMs).toBeUndefined();
    r = feed(c, r.state, ev('x', 0, T0 + s(20)));
    r = feed(c, r.state, ev('x', 7, T0 + s(30)));
    expect(r.firedAtMs).toBe(T0 + s(30));
  });

  test('cooldown_s: nothing inside it, even after a false; still true at its end fires there', () => {
    const c = cond({ signal: 'x', op: '>', value: 1 }, { cooldown_s: 60 });
    let r = feed(c, initialConditionState(T0), ev('x', 5, T0));
    expect(r.firedAtMs).toBe(T0);
    expect(r.nextCheckMs).toBe(T0 + s(60));
    r = feed(c, r.state, ev('x', 0, T0 + s(10)));
    r = feed(c, r.state, ev('x', 5, T0 + s(20)));
    expect(r.firedAtMs).toBeUndefined();
    expect(r.nextCheckMs).toBe(T0 + s(60));
    expect(step(c, r.state, T0 + s(60)).firedAtMs).toBe(T0 + s(60));
    // False at the cooldown's end: no fire.
    const f = feed(c, r.state, ev('x', 0, T0 + s(50)));
    expect(step(c, f.state, T0 + s(60)).firedAtMs).toBeUndefined();
  });
});

describe('the scheduler state: delay dedupe, condition runs, re-deliveries', () => {
  const delay = (extra: Partial<DelayTrigger> = {}): DelayTrigger => ({ type: 'delay', event: 'deploy', seconds: 600, deduplicate: false, ...extra });

  test('without deduplicate every event waits for its own run', () => {
    const t = delay();
    let st = signalStateFor(undefined, t);
    st = takeSignal(t, st, ev('deploy', null, T0), 'task-a');
    st = takeSignal(t, st, ev('deploy', null, T0 + s(5)), 'task-a');
    expect(st.pending).toHaveLength(2);
    expect(nextWakeMs(st)).toBe(T0 + s(600));
  });

  test('deduplicate: events with one key inside the wait join one run; its id names the key and the opening event', () => {
    const t = delay({ deduplicate: true, dedupe_key: '{{values.host}}' });
    let st = signalStateFor(undefined, t);
    const first = ev('deploy', null, T0, { host: 'web-1' });
    st = takeSignal(t, st, first, 'task-a');
    st = takeSignal(t, st, ev('deploy', null, T0 + s(100), { host: 'web-1' }), 'task-a');
    st = takeSignal(t, st, ev('deploy', null, T0 + s(200), { host: 'web-2' }), 'task-a');
    // A re-delivered signal id is dropped.
    st = takeSignal(t, st, first, 'task-a');
    st = takeSignal(t, st, ev('other', null, T0), 'task-a');
    expect(st.pending.map((p) => [p.key, p.joined])).toEqual([
      ['key:web-1', 1],
      ['key:web-2', 0],
    ]);
    const due = dueAt(t, st, T0 + s(600), 'task-a');
    expect(due.start.map((p) => p.runId)).toEqual(['run/task-a/delay/key:web-1/2026-03-09T01:00:00.000Z']);
    expect(due.start[0].cause).toMatch(/signal "deploy" \(sig-\d+\) at 2026-03-09T01:00:00.000Z.*1 more event with its dedupe key joined/);
    // After the run started, the same key opens a new wait with a new run id.
    const again = takeSignal(t, due.state, ev('deploy', null, T0 + s(700), { host: 'web-1' }), 'task-a');
    expect(again.pending.map((p) => p.runId)).toContain('run/task-a/delay/key:web-1/2026-03-09T01:11:40.000Z');
  });

  test('dedupe keys are made safe for a workflow id; templates are checked', () => {
    expect(dedupeKey(delay({ deduplicate: true, dedupe_key: '{{name}}/{{values.h}} x' }), ev('deploy', 1, T0, { h: 'a b' }))).toBe('key:deploy_a_b_x');
    expect(delayProblems(delay({ deduplicate: true, dedupe_key: '{{host}}' }))[0]).toMatchObject({ field: 'trigger.dedupe_key' });
    expect(delayProblems(delay({ dedupe_key: '{{name}}' }))[0]).toMatchObject({ field: 'trigger.dedupe_key', reason: 'needs deduplicate: true' });
  });

  test('a condition run waits delay_s and is named by its nominal time; a changed trigger starts afresh', () => {
    const t = cond({ signal: 'x', op: '>', value: 1, for_s: 30 }, { delay_s: 10 });
    let st = signalStateFor(undefined, t);
    st = takeSignal(t, st, ev('x', 2, T0), 'diag');
    expect(nextWakeMs(st)).toBe(T0 + s(30));
    // The scheduler woke late (at +45 s): the decision is still made at +30 s.
    const d1 = dueAt(t, st, T0 + s(45), 'diag');
    expect(d1.start.map((p) => [p.runId, p.trigger])).toEqual([['run/diag/2026-03-09T01:00:40.000Z', 'condition']]);
    expect(signalStateFor(d1.state, t).condition?.lastFireMs).toBe(T0 + s(30));
    expect(signalStateFor(d1.state, { ...t, cooldown_s: 5 }).condition?.lastFireMs).toBeNull();
  });

  test('condition rules name their fields', () => {
    const p = conditionProblems(cond({ all: [{ signal: 'x', op: '>', value: 'high', for_s: 0 }, { window: { days: [1], from: '9:00', to: '9:00' } }] }));
    expect(p.map((x) => x.field)).toEqual(['trigger.when.all.0.value', 'trigger.when.all.1.window.from', 'trigger.when.all.1.window.to', 'trigger.when.all.1.window.to']);
  });
});
