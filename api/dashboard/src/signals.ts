/**
 * Send a signal (POST /v1/signals) to the delay and condition triggers listening to its name,
 * and list what was sent from this page with the API's answer (seq, deduplicated, the tasks
 * it reached). The API has no route that lists stored signals, so the list is this browser's.
 */
import { href, tk } from './app';
import { h, time } from './dom';
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

/** The send form and this page's list of sent signals; `name` prefills the signal a trigger listens to. */
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
  );
}
