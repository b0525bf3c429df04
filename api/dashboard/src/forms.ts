/**
 * Forms that write through the API: each control is registered under the field path the API
 * names in its problem details (`trigger.expression`, `agent.base_url`, `from`), so a 400's
 * field errors are shown at the field they name; what names no control shows above the form.
 * A form being typed in is marked `data-editing`, and auto-refresh leaves such a page alone.
 */
import { TimekeeperApiError } from '../../../sdk/client';
import { errorBox } from './app';
import { append, fill, h } from './dom';

interface Slot {
  control: HTMLElement;
  out: HTMLElement;
}

export class FieldErrors {
  private readonly slots = new Map<string, Slot>();
  /** Errors no control is registered for, and failures that are not field errors. */
  readonly general: HTMLElement;

  constructor(readonly formId: string) {
    this.general = h('div', { class: 'form-errors', id: `${formId}-errors`, 'aria-live': 'polite' });
  }

  /** A labelled control whose errors are those naming `name`, or a path under it the form has no control for. */
  field(label: string, name: string, control: HTMLElement, hint?: Node | string): HTMLElement {
    const id = `${this.formId}-${name.replace(/[^A-Za-z0-9_-]/g, '-')}`;
    const out = h('span', { class: 'field-error', id: `${id}-error`, 'data-error-for': name });
    control.id ||= id;
    control.setAttribute('aria-describedby', out.id);
    this.slots.set(name, { control, out });
    return h('label', { class: 'field', for: control.id, 'data-field': name }, h('span', {}, label), control, hint ? h('span', { class: 'hint' }, hint) : null, out);
  }

  clear(): void {
    fill(this.general);
    for (const s of this.slots.values()) {
      fill(s.out);
      s.control.removeAttribute('aria-invalid');
    }
  }

  /** One error at one field (a check made here, before anything is sent). */
  at(name: string, reason: string): void {
    this.put(name, reason);
  }

  /** Shows a failed request: its field errors at their fields, anything else above the form. */
  show(e: unknown): void {
    this.clear();
    const fields = e instanceof TimekeeperApiError ? e.errors : [];
    if (!fields.length) {
      fill(this.general, errorBox(e));
      return;
    }
    for (const f of fields) this.put(f.field, f.reason);
    if (this.general.childNodes.length === 0) append(this.general, [h('p', { class: 'error', role: 'alert' }, `The API refused this: ${fields.length === 1 ? 'one field needs' : `${fields.length} fields need`} a change (shown at the field).`)]);
  }

  /** The control for the longest registered prefix of `field`; the rest of the path leads the message. */
  private put(field: string, reason: string): void {
    const parts = field.split('.');
    for (let n = parts.length; n > 0; n--) {
      const slot = this.slots.get(parts.slice(0, n).join('.'));
      if (!slot) continue;
      const rest = parts.slice(n).join('.');
      append(slot.out, [h('span', { class: 'msg' }, rest ? `${rest} ${reason}` : reason)]);
      slot.control.setAttribute('aria-invalid', 'true');
      return;
    }
    append(this.general, [h('p', { class: 'error', role: 'alert' }, `${field}: ${reason}`)]);
  }
}

/** Runs a form's request with its submit button disabled; a failure is shown by `errors`. */
export async function sending(submit: HTMLButtonElement, errors: FieldErrors, request: () => Promise<void>): Promise<void> {
  submit.disabled = true;
  try {
    await request();
  } catch (e) {
    errors.show(e);
  } finally {
    submit.disabled = false;
  }
}

/** A JSON textarea's value, or undefined after showing why it is not JSON at its field. */
export function parseJson(errors: FieldErrors, name: string, text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    errors.at(name, `is not valid JSON (${e instanceof Error ? e.message : String(e)})`);
    return { ok: false };
  }
}

/** A `datetime-local` value (the viewer's zone) as an ISO instant; '' when empty or not a time. */
export function localToIso(v: string): string {
  if (!v) return '';
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

/** An instant as a `datetime-local` value in the viewer's zone, to the second. */
export function isoToLocal(iso: string | number): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** Marks `form` as being edited once anything in it changes (main.ts's auto-refresh then waits). */
export function editing<F extends HTMLFormElement>(form: F): F {
  form.addEventListener('input', () => form.setAttribute('data-editing', ''));
  return form;
}

export const textarea = (name: string, value: string, rows = 6): HTMLTextAreaElement => {
  const t = h('textarea', { name, rows, spellcheck: 'false', class: 'json' });
  t.value = value;
  return t;
};
