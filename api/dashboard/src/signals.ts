/**
 * Send a signal (POST /v1/signals) to the delay and condition triggers listening to its name,
 * list what was sent from this page with the API's answer (seq, deduplicated, the tasks it
 * reached: only the send's answer knows them), and the stored signals (GET /v1/signals, newest
 * first, as far as the key's bounds let it see them) with a button for the next page.
 */
import { errorBox, href, tk } from './app';
import { button, empty, fill, h, time } from './dom';
import { editing, FieldErrors, parseJson, sending, textarea } from './forms';

type Scalar = number | string | boolean | null;

/** A typed value: JSON when it parses as a number, boolean or null, else the text itself. */
function scalar(text: string): Scalar | undefined {
  if (text.trim() === '') return undefined;
  try {
    const v: unknown = JSON.parse(text);
    if (v === null || ['number', 'boolean', 'string'].includes(typeof v)) return v as Scalar;
  } catch {
    /* plain text */
  }
  return text;
}

const STORED_PAGE = 10;

/** The stored signals (of `name` when given), newest first; `reload` starts again from the newest. */
function storedSignals(name: string): { node: Node; reload: () => Promise<void> } {
  const rows = h('tbody', {});
  const table = h(
    'table',
    { class: 'list', id: 'signals-stored', hidden: true },
    h('thead', {}, h('tr', {}, ...['Signal', 'Value', 'Fields', 'Seq', 'At', 'Source'].map((t) => h('th', { scope: 'col' }, t)))),
    rows,
  );
  const more = h('div', { class: 'more' });
  const load = async (cursor?: string) => {
    const page = await tk().signals.list({ name: name || undefined, limit: STORED_PAGE, cursor });
    if (!cursor) rows.replaceChildren();
    for (const s of page.signals) {
      rows.append(
        h(
          'tr',
          { 'data-signal': s.signal_id },
          h('td', {}, h('code', {}, s.name), h('div', { class: 'muted small' }, s.signal_id)),
          h('td', {}, JSON.stringify(s.value)),
          h('td', {}, Object.keys(s.values).length ? JSON.stringify(s.values) : '—'),
          h('td', { class: 'num' }, s.seq),
          h('td', {}, time(s.at)),
          h('td', {}, s.source === 'task_run' ? 'run outcome' : 'API', s.agents ? h('div', { class: 'muted small' }, `for ${s.agents.join(', ')}`) : null),
        ),
      );
    }
    table.hidden = rows.childElementCount === 0;
    const next = page.next_cursor;
    fill(more, next ? button('More signals', () => load(next).catch((err: unknown) => fill(more, errorBox(err))), { class: 'secondary', id: 'signals-more' }) : rows.childElementCount ? null : empty(name ? `No signal named ${name} is stored.` : 'No signals are stored.'));
  };
  const reload = () => load().catch((err: unknown) => fill(more, errorBox(err)));
  void reload();
  return { node: h('div', {}, h('h3', {}, name ? `Stored "${name}" signals, newest first` : 'Stored signals, newest first'), table, more), reload };
}

/** The send form, this page's list of sent signals and the stored ones; `name` prefills the signal a trigger listens to. */
export function signalPanel(name = ''): Node {
  const errors = new FieldErrors('signal');
  const nameIn = h('input', { name: 'name', value: name, placeholder: 'e.g. deploy_finished', autocomplete: 'off' });
  const value = h('input', { name: 'value', placeholder: 'number, true/false, null or text' });
  const values = textarea('values', '', 2);
  values.placeholder = '{"host": "web-1"}';
  const signalId = h('input', { name: 'signal_id', placeholder: 'generated when empty', autocomplete: 'off' });
  const sent = h('tbody', {});
  const table = h(
    'table',
    { class: 'list', id: 'signals-sent', hidden: true },
    h('thead', {}, h('tr', {}, ...['Signal', 'Value', 'Seq', 'At', 'Delivered to'].map((t) => h('th', { scope: 'col' }, t)))),
    sent,
  );
  const submit = h('button', { type: 'submit' }, 'Send signal');
  const stored = storedSignals(name);
  return h(
    'section',
    { class: 'panel', id: 'signals', 'aria-labelledby': 'signals-title' },
    h('h2', { id: 'signals-title' }, 'Signals'),
    h('p', { class: 'muted small' }, 'A named event for the delay and condition triggers that listen to its name. Sending the same signal id again stores nothing new.'),
    editing(h(
      'form',
      {
        class: 'filters',
        id: 'signal-form',
        novalidate: true,
        onsubmit: async (e: Event) => {
          e.preventDefault();
          errors.clear();
          const v = values.value.trim() ? parseJson(errors, 'values', values.value) : { ok: true as const, value: undefined };
          if (!v.ok) return;
          await sending(submit, errors, async () => {
            const body = { name: nameIn.value.trim(), value: scalar(value.value), values: v.value as Record<string, Scalar> | undefined, signal_id: signalId.value.trim() || undefined };
            const r = (await tk().call('sendSignal', { body })).body;
            table.hidden = false;
            sent.prepend(
              h(
                'tr',
                { 'data-signal': r.signal_id },
                h('td', {}, h('code', {}, r.name), h('div', { class: 'muted small' }, r.signal_id, r.deduplicated ? ' (already stored: delivered again)' : '')),
                h('td', {}, body.value === undefined ? '—' : JSON.stringify(body.value)),
                h('td', { class: 'num' }, r.seq),
                h('td', {}, time(r.at)),
                h('td', { class: 'delivered' }, r.delivered_to.length ? r.delivered_to.map((t) => [h('a', { href: href(['tasks', t]) }, t), ' ']) : h('span', { class: 'muted' }, 'no task listens to this name')),
              ),
            );
            await stored.reload();
          });
        },
      },
      errors.general,
      errors.field('Name', 'name', nameIn),
      errors.field('Value', 'value', value),
      errors.field('Fields (JSON)', 'values', values),
      errors.field('Signal id', 'signal_id', signalId),
      submit,
    )),
    table,
    stored.node,
  );
}
