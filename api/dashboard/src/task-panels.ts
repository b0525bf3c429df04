/**
 * The parts of a task's page that act or read beyond its runs: delete (asked twice), backfill
 * a range of past fire times, the rows its `table` delivery stored (results), and the run it
 * is a follow-up of. Field errors from the API are shown at the field (forms.ts).
 */
import type { ResponseBody } from '../../../sdk/client';
import { errorBox, go, href, tk } from './app';
import { badge, button, empty, fill, folded, h, time, viewerZone } from './dom';
import { editing, FieldErrors, isoToLocal, localToIso, sending } from './forms';

type TaskDetail = ResponseBody<'getTask'>;

/** Delete: the first click asks, the second deletes; the task stays readable as deleted. */
export function deleteControl(task: TaskDetail, out: HTMLElement): Node {
  const slot = h('span', { class: 'delete-control' });
  const ask = (): void =>
    fill(
      slot,
      h('span', { class: 'confirm', role: 'alert' }, `Delete ${task.task_id}? It stops firing; its history and runs stay readable. `),
      button(
        'Yes, delete',
        async () => {
          try {
            await tk().call('deleteTask', { params: { id: task.task_id } });
            go(['tasks', task.task_id]);
          } catch (e) {
            fill(out, errorBox(e));
          }
        },
        { class: 'small danger', id: 'delete-confirm' },
      ),
      ' ',
      button('Keep it', () => { fill(slot, first()); }, { class: 'small secondary' }),
    );
  const first = (): HTMLButtonElement => button('Delete', ask, { class: 'small danger', 'data-action': 'delete', 'aria-label': `Delete ${task.task_id}` });
  fill(slot, first());
  return slot;
}

/** "Follow-up of run …": the run whose next_action created this task. */
export function parentLink(task: TaskDetail): Node | null {
  const parent = task.parent_run_id;
  if (!parent) return null;
  // Run ids are run/<task id>/<fire time> (lib/domain/tasks/index.ts runId).
  const parentTask = parent.split('/')[1];
  return h('p', { id: 'parent-run', class: 'muted' }, 'A follow-up of run ', h('code', {}, parent), parentTask ? [' of ', h('a', { href: href(['tasks', parentTask]) }, parentTask)] : null);
}

/** Backfill: run every fire time in [from, to] once; what ran before is not run again. The answer stays shown (Refresh shows the new runs). */
export function backfillPanel(task: TaskDetail): Node {
  const errors = new FieldErrors('backfill');
  const now = Date.now();
  const from = h('input', { name: 'from', type: 'datetime-local', step: 1, value: isoToLocal(now - 24 * 3_600_000) });
  const to = h('input', { name: 'to', type: 'datetime-local', step: 1, value: isoToLocal(now) });
  const out = h('div', { id: 'backfill-out', 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit' }, 'Backfill');
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': 'backfill-title' },
    h('h2', { id: 'backfill-title' }, 'Backfill'),
    h('p', { class: 'muted small' }, `Runs each fire time in the range once (times in ${viewerZone()}); fire times that already ran are not run again.`),
    editing(h(
      'form',
      {
        class: 'filters',
        id: 'backfill-form',
        novalidate: true,
        onsubmit: async (e: Event) => {
          e.preventDefault();
          errors.clear();
          fill(out);
          const body = { from: localToIso(from.value), to: localToIso(to.value) };
          if (!body.from) errors.at('from', 'is required: a date and time');
          if (!body.to) errors.at('to', 'is required: a date and time');
          if (!body.from || !body.to) return;
          await sending(submit, errors, async () => {
            const r = (await tk().call('backfillTask', { params: { id: task.task_id }, body })).body;
            fill(
              out,
              h('p', { class: 'ok', id: 'backfill-summary' }, `${r.started.length} started, ${r.already_run.length} had already run.`),
              r.started.length ? h('ol', { class: 'fires' }, ...r.started.map((x) => h('li', { 'data-run': x.run_id }, time(x.scheduled_at)))) : null,
            );
          });
        },
      },
      errors.general,
      errors.field('From', 'from', from),
      errors.field('To', 'to', to),
      submit,
    )),
    out,
  );
}

/** The rows the task's `table` delivery stored, newest first, each answer whole. */
export async function resultsSection(task: TaskDetail): Promise<Node> {
  const hasTable = ((task.definition.delivery as { type?: string }[] | undefined) ?? []).some((d) => d.type === 'table');
  let body: Node;
  try {
    const rows = (await tk().call('listTaskResults', { params: { id: task.task_id }, query: { limit: 20 } })).body.results;
    body = rows.length
      ? h(
          'table',
          { class: 'list', id: 'results-table' },
          h('thead', {}, h('tr', {}, ...['Scheduled', 'Status', 'Processed', 'Errors', 'Summary', 'Answer'].map((t) => h('th', { scope: 'col' }, t)))),
          h(
            'tbody',
            {},
            ...rows.map((r) =>
              h(
                'tr',
                { 'data-run': r.run_id },
                h('td', {}, time(r.scheduled_at)),
                h('td', {}, badge(r.status)),
                h('td', { class: 'num' }, r.processed ?? '—'),
                h('td', { class: 'num' }, r.error_count ?? '—'),
                h('td', { class: 'summary' }, r.summary),
                h('td', {}, folded(r.result)),
              ),
            ),
          ),
        )
      : empty(hasTable ? 'No results stored yet.' : 'This task has no table delivery: its results are in its runs and deliveries.');
  } catch (e) {
    body = errorBox(e);
  }
  return h('section', { id: 'results', 'aria-labelledby': 'results-title' }, h('h2', { id: 'results-title' }, 'Results'), body);
}
