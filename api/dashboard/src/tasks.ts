/**
 * Tasks: the list (newest first) with triggers in words, next fires and lateness, the actions,
 * runs with their follow-ups, the needs-attention queue, the cron preview, signals; a task's
 * create and edit form (task-form.ts), delete, backfill and results (task-panels.ts).
 */
import type { ResponseBody } from '../../../sdk/client';
import { TASK_STATUSES } from '../../../lib/domain/tasks';
import { errorBox, go, href, tk, type Page, type PageContext } from './app';
import { pagerNav } from './pager';
import { badge, button, duration, empty, field, fill, folded, h, input, select, time, viewerZone } from './dom';
import { signalPanel } from './signals';
import { taskForm } from './task-form';
import { backfillPanel, deleteControl, parentLink, resultsSection } from './task-panels';

type Task = ResponseBody<'listTasks'>['tasks'][number];
type Run = ResponseBody<'listRuns'>['runs'][number];
type RunDetail = ResponseBody<'getRun'>;

const PAGE = 25;
const RUNS_PAGE = 50;

/** Pause / resume / run-now for one task; after each, the page reloads its data. */
function actions(t: Pick<Task, 'task_id' | 'enabled' | 'deleted'>, ctx: PageContext, out: HTMLElement): Node {
  const act = (label: string, what: 'pause' | 'resume' | 'trigger') =>
    button(
      label,
      async () => {
        fill(out, h('span', { class: 'muted' }, `${label}…`));
        try {
          if (what === 'trigger') {
            const r = await tk().call('triggerTask', { params: { id: t.task_id } });
            fill(out, h('span', { class: 'ok' }, `started ${r.body.run_id}`));
          } else {
            await tk().call(what === 'pause' ? 'pauseTask' : 'resumeTask', { params: { id: t.task_id } });
          }
          ctx.refresh();
        } catch (e) {
          fill(out, errorBox(e));
        }
      },
      { class: 'small', 'data-action': what, 'aria-label': `${label} ${t.task_id}` },
    );
  if (t.deleted) return h('span', { class: 'muted' }, 'deleted');
  return h('span', { class: 'actions' }, t.enabled ? act('Pause', 'pause') : act('Resume', 'resume'), act('Run now', 'trigger'));
}

const taskState = (t: Task): Node => (t.deleted ? badge('deleted') : !t.enabled ? badge('paused') : badge(t.status));

function runsTable(runs: Run[], details: Map<string, RunDetail | Error>, withTask = false): Node {
  if (!runs.length) return empty('No runs yet.');
  const delivery = (r: Run) => {
    const d = details.get(r.run_id);
    if (!d) return '—';
    if (d instanceof Error) return h('span', { class: 'muted' }, 'unavailable');
    if (!d.deliveries.length) return h('span', { class: 'muted' }, 'none');
    return d.deliveries.map((x) => h('span', { title: x.detail ?? '' }, badge(`${x.type} ${x.ok ? 'ok' : 'failed'}`, x.ok ? 'ok' : 'bad'), ' '));
  };
  /** The tasks a run's next_action created. */
  const followUps = (r: Run) => {
    const d = details.get(r.run_id);
    if (!d || d instanceof Error || !d.follow_ups.length) return '—';
    return d.follow_ups.map((f) => h('div', {}, h('a', { href: href(['tasks', f.task_id]) }, f.task_id), f.name && f.name !== f.task_id ? h('span', { class: 'muted small' }, ` ${f.name}`) : null));
  };
  return h(
    'table',
    { class: 'list runs' },
    h('thead', {}, h('tr', {}, ...[withTask ? 'Task' : null, 'Run', 'Status', 'Scheduled', 'Lateness', 'Duration', 'Attempts', 'Summary', 'Delivery', 'Follow-ups'].filter((x): x is string => !!x).map((t) => h('th', { scope: 'col' }, t)))),
    h(
      'tbody',
      {},
      ...runs.map((r) =>
        h(
          'tr',
          { 'data-run': r.run_id, 'data-status': r.status },
          withTask ? h('td', {}, h('a', { href: href(['tasks', r.task_id]) }, r.task_id)) : null,
          h('td', {}, h('code', { title: r.run_id }, r.trigger), r.needs_attention ? [' ', badge('needs attention', 'bad')] : null),
          h('td', {}, badge(r.status), r.reason ? h('div', { class: 'muted small' }, r.reason) : null),
          h('td', {}, time(r.scheduled_at)),
          h('td', { class: 'num' }, duration(r.lateness_ms)),
          h('td', { class: 'num' }, duration(r.duration_ms)),
          h('td', { class: 'num' }, String(r.attempt)),
          h('td', {}, r.summary ? folded(r.summary) : r.result ? folded(r.result) : '—'),
          h('td', {}, delivery(r)),
          h('td', { class: 'follow-ups' }, followUps(r)),
        ),
      ),
    ),
  );
}

/** Each run's deliveries (one request per run: the list answer does not carry them). */
async function runDetails(runs: Run[]): Promise<Map<string, RunDetail | Error>> {
  const client = tk();
  const out = new Map<string, RunDetail | Error>();
  await Promise.all(
    runs.map(async (r) => {
      try {
        out.set(r.run_id, (await client.call('getRun', { params: { id: r.run_id } })).body);
      } catch (e) {
        out.set(r.run_id, e instanceof Error ? e : new Error(String(e)));
      }
    }),
  );
  return out;
}

function previewBox(): Node {
  const cron = input('cron', '0 9 * * 1-5', 'cron (5 or 6 fields)');
  const zone = input('timezone', viewerZone(), 'IANA zone, e.g. Asia/Shanghai');
  const out = h('div', { id: 'preview-out', 'aria-live': 'polite' });
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': 'preview-title' },
    h('h2', { id: 'preview-title' }, 'Cron preview'),
    h(
      'form',
      {
        class: 'filters',
        id: 'preview-form',
        onsubmit: async (e: Event) => {
          e.preventDefault();
          fill(out, h('span', { class: 'muted' }, 'Computing…'));
          try {
            const r = (await tk().call('previewSchedule', { query: { cron: cron.value.trim(), timezone: zone.value.trim() || 'UTC', count: 5 } })).body;
            fill(out, h('p', {}, r.description), h('ol', { class: 'fires' }, ...r.fire_times.map((t) => h('li', {}, time(t)))));
          } catch (err) {
            fill(out, errorBox(err));
          }
        },
      },
      field('Expression', cron),
      field('Time zone', zone),
      h('button', { type: 'submit' }, 'Preview'),
    ),
    out,
  );
}

export const tasksPage: Page = async (ctx) => {
  const q = ctx.route.query;
  if (q.get('new') === '1') return h('div', {}, h('p', {}, h('a', { href: href(['tasks']) }, '← Tasks')), h('h1', {}, 'New task'), taskForm());
  const f = { status: q.get('status') ?? '', enabled: q.get('enabled') ?? '', tag: q.get('tag') ?? '' };
  const cursor = q.get('cursor') ?? undefined;
  const client = tk();
  const [res, attention] = await Promise.all([
    client.call('listTasks', { query: { status: (f.status || undefined) as Task['status'] | undefined, enabled: (f.enabled || undefined) as 'true' | 'false' | undefined, tag: f.tag || undefined, cursor, limit: PAGE } }),
    client.call('listRuns', { query: { status: 'needs_attention', limit: 50 } }),
  ]);
  const tasks = res.body.tasks;
  // The last run's lateness is on the run, not the task: one small request per task shown.
  const lastRuns = new Map<string, Run | undefined>();
  await Promise.all(
    tasks.map(async (t) => {
      if (!t.last_run) return;
      try {
        lastRuns.set(t.task_id, (await client.call('listTaskRuns', { params: { id: t.task_id }, query: { limit: 1 } })).body.runs[0]);
      } catch {
        lastRuns.set(t.task_id, undefined);
      }
    }),
  );
  const attentionRuns = attention.body.runs;
  const attentionDetails = await runDetails(attentionRuns);

  const status = select('status', TASK_STATUSES, f.status);
  const enabled = select('enabled', ['true', 'false'], f.enabled);
  const tag = input('tag', f.tag, 'tag');
  const form = h(
    'form',
    {
      class: 'filters',
      'aria-label': 'Task filters',
      onsubmit: (e: Event) => {
        e.preventDefault();
        go(['tasks'], { status: status.value, enabled: enabled.value, tag: tag.value.trim() });
      },
    },
    field('Last status', status),
    field('Enabled', enabled),
    field('Tag', tag),
    h('button', { type: 'submit' }, 'Filter'),
    h('a', { href: href(['tasks']), class: 'btn secondary' }, 'Clear'),
  );

  const rows = tasks.map((t) => {
    const out = h('div', { class: 'action-out', 'aria-live': 'polite' });
    const last = lastRuns.get(t.task_id);
    return h(
      'tr',
      { 'data-task': t.task_id },
      h('td', {}, h('a', { href: href(['tasks', t.task_id]) }, t.task_id), t.name && t.name !== t.task_id ? h('div', { class: 'muted small' }, t.name) : null),
      h('td', {}, taskState(t)),
      h('td', { class: 'trigger' }, t.trigger_text),
      h('td', {}, t.enabled ? time(t.next_run) : h('span', { class: 'muted' }, 'paused')),
      h('td', {}, t.last_run ? [badge(t.last_run.status), ' ', time(t.last_run.scheduled_at)] : h('span', { class: 'muted' }, 'never ran')),
      h('td', { class: 'num' }, last ? duration(last.lateness_ms) : '—'),
      h('td', {}, actions(t, ctx, out), out),
    );
  });

  return h(
    'div',
    {},
    h('div', { class: 'title-row' }, h('h1', {}, 'Tasks ', h('span', { class: 'muted' }, '— newest first')), h('a', { class: 'btn', id: 'new-task', href: href(['tasks'], { new: '1' }) }, 'New task')),
    form,
    tasks.length
      ? h(
          'table',
          { class: 'list', id: 'tasks-table' },
          h('thead', {}, h('tr', {}, ...['Task', 'State', 'Trigger', 'Next fire', 'Last run', 'Lateness', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))),
          h('tbody', {}, ...rows),
        )
      : empty('No tasks match these filters.'),
    pagerNav(['tasks'], f, cursor, q.get('back') ?? '', res.body.next_cursor),
    h('section', { id: 'needs-attention', 'aria-labelledby': 'na-title' }, h('h2', { id: 'na-title' }, `Needs attention (${attentionRuns.length})`), attentionRuns.length ? runsTable(attentionRuns, attentionDetails, true) : empty('No run needs attention.')),
    previewBox(),
    signalPanel(),
  );
};

/** The signal name a delay or condition trigger waits for (the first one a condition names), to prefill the signal form. */
function listenedSignal(trigger: unknown): string | undefined {
  const t = trigger as { type?: string; event?: string };
  if (t?.type === 'delay') return t.event;
  if (t?.type === 'condition') return /"signal":"([^"]+)"/.exec(JSON.stringify(trigger))?.[1];
  return undefined;
}

export const taskPage: Page = async (ctx) => {
  const id = ctx.route.path[1];
  const q = ctx.route.query;
  const cursor = q.get('cursor') ?? undefined;
  const client = tk();
  const [t, runsRes] = await Promise.all([client.call('getTask', { params: { id } }), client.call('listTaskRuns', { params: { id }, query: { limit: RUNS_PAGE, cursor } })]);
  const task = t.body;
  if (q.get('edit') === '1' && !task.deleted) return h('div', {}, h('p', {}, h('a', { href: href(['tasks', id]) }, `← Task ${id}`)), h('h1', {}, 'Edit task ', h('code', {}, task.task_id)), taskForm(task));
  const runs = runsRes.body.runs;
  const [details, results] = await Promise.all([runDetails(runs), resultsSection(task)]);
  const out = h('div', { class: 'action-out', 'aria-live': 'polite' });
  const listens = listenedSignal(task.definition.trigger);
  return h(
    'div',
    {},
    h('p', {}, h('a', { href: href(['tasks']) }, '← Tasks')),
    h('h1', {}, 'Task ', h('code', {}, task.task_id), ' ', taskState(task)),
    parentLink(task),
    h(
      'div',
      { class: 'toolbar' },
      actions(task, ctx, out),
      task.deleted ? null : [h('a', { class: 'btn small secondary', id: 'edit-task', href: href(['tasks', id], { edit: '1' }) }, 'Edit'), deleteControl(task, out)],
      out,
    ),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Name'), h('dd', {}, task.name),
      h('dt', {}, 'Trigger'), h('dd', { id: 'trigger-text' }, task.trigger_text),
      h('dt', {}, 'Created by'), h('dd', { id: 'created-by' }, task.created_by ? h('code', {}, task.created_by) : h('span', { class: 'muted' }, 'an operator (no agent)')),
      h('dt', {}, 'Next fire times'), h('dd', {}, task.enabled && task.next_fire_times.length ? h('ol', { class: 'fires', id: 'next-fires' }, ...task.next_fire_times.map((x) => h('li', {}, time(x)))) : h('span', { class: 'muted' }, task.enabled ? 'none' : 'paused: none until resumed')),
      h('dt', {}, 'Last change'), h('dd', {}, `${task.last_change.action}${task.last_change.reason ? `: ${task.last_change.reason}` : ''} (version ${task.version}, `, time(task.updated_at), ')'),
      h('dt', {}, 'Scheduler'), h('dd', {}, h('code', {}, task.scheduler.workflow_id), task.scheduler.running_runs?.length ? ` — running: ${task.scheduler.running_runs.join(', ')}` : ''),
      h('dt', {}, 'Definition'), h('dd', {}, folded(task.definition)),
      h('dt', {}, 'History'), h('dd', {}, h('ol', { class: 'history' }, ...task.history.map((x) => h('li', {}, `v${x.version} ${x.action}${x.reason ? ` (${x.reason})` : ''} `, time(x.recorded_at))))),
    ),
    h(
      'section',
      { id: 'runs', 'aria-labelledby': 'runs-title' },
      h('h2', { id: 'runs-title' }, 'Runs ', h('span', { class: 'muted' }, cursor || runsRes.body.next_cursor ? `— ${runs.length} on this page, newest first` : `(${runs.length})`)),
      runsTable(runs, details),
      pagerNav(['tasks', id], {}, cursor, q.get('back') ?? '', runsRes.body.next_cursor),
    ),
    results,
    task.deleted ? null : backfillPanel(task),
    listens ? signalPanel(listens) : null,
  );
};
