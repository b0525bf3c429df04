/**
 * The task form: create (#/tasks?new=1, POST /v1/tasks) and edit (#/tasks/<id>?edit=1, PATCH
 * /v1/tasks/<id> with only the fields that changed, so write-only secrets the form never saw
 * are kept). A cron trigger gets its preview beside the expression (/v1/schedules/preview,
 * as it is typed); the API's field errors are shown at the field they name (forms.ts).
 * The agent and the delivery are JSON: their shapes differ by type, and the API says exactly
 * which part is wrong.
 */
import type { CallRequest, ResponseBody } from '../../../sdk/client';
import { go, href, tk } from './app';
import { fill, h, time, viewerZone } from './dom';
import { editing, FieldErrors, isoToLocal, localToIso, parseJson, sending, textarea } from './forms';

type TaskDetail = ResponseBody<'getTask'>;
type CreateBody = NonNullable<CallRequest<'createTask'>['body']>;
type PatchBody = NonNullable<CallRequest<'patchTask'>['body']>;
type Json = Record<string, unknown>;

const FORM_TRIGGERS = ['cron', 'interval', 'at', 'json'] as const;
type FormTrigger = (typeof FORM_TRIGGERS)[number];
const TRIGGER_LABELS: Record<FormTrigger, string> = { cron: 'cron expression', interval: 'every N seconds', at: 'once, at a time', json: 'other (delay, condition: JSON)' };

const NEW_AGENT = { type: 'openai', base_url: 'http://127.0.0.1:11434/v1', model: 'qwen2.5', api_key_env: 'LLM_API_KEY', prompt_template: 'Summarise the day {{date}}' };

const pretty = (v: unknown) => JSON.stringify(v, null, 2);
const PREVIEW_DELAY_MS = 300;

/** Reads show each secret as `"secret_set": true`; a PATCH that omits the secret keeps it, so the marker is not sent back. */
function withoutSecretMarkers(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutSecretMarkers);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'secret_set').map(([k, x]) => [k, withoutSecretMarkers(x)]));
  return v;
}

/** The cron preview beside the expression: the next fire times in words and instants, or why the expression is refused. */
function cronPreview(cron: HTMLInputElement, zone: HTMLInputElement): { box: HTMLElement; update: () => void } {
  const box = h('div', { class: 'cron-preview', id: 'cron-preview', 'aria-live': 'polite' });
  let timer: number | undefined;
  let asked = 0;
  const run = async () => {
    const mine = ++asked;
    const expression = cron.value.trim();
    if (!expression) return fill(box, h('span', { class: 'muted' }, 'Type an expression to see its next fire times.'));
    try {
      const r = (await tk().call('previewSchedule', { query: { cron: expression, timezone: zone.value.trim() || 'UTC', count: 5 } })).body;
      if (mine !== asked) return;
      fill(box, h('p', { class: 'preview-words' }, r.description), h('ol', { class: 'fires' }, ...r.fire_times.map((t) => h('li', {}, time(t)))));
    } catch (e) {
      if (mine !== asked) return;
      const errors = (e as { errors?: { field: string; reason: string }[] }).errors ?? [];
      fill(box, h('p', { class: 'error', role: 'alert' }, errors.length ? errors.map((f) => `${f.field === 'cron' ? 'expression' : f.field} ${f.reason}`).join('; ') : String((e as Error).message)));
    }
  };
  const update = () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => void run(), PREVIEW_DELAY_MS);
  };
  cron.addEventListener('input', update);
  zone.addEventListener('input', update);
  return { box, update };
}

/** The form for a new task (`current` undefined) or for changing `current`. */
export function taskForm(current?: TaskDetail): Node {
  const d = (current?.definition ?? {}) as Json;
  const trig = (d.trigger ?? { type: 'cron', expression: '0 9 * * 1-5', timezone: viewerZone() }) as Json;
  const startType: FormTrigger = (FORM_TRIGGERS as readonly string[]).includes(String(trig.type)) ? (trig.type as FormTrigger) : 'json';
  const errors = new FieldErrors('task-form');

  const taskId = h('input', { name: 'task_id', placeholder: 'generated when empty', autocomplete: 'off' });
  const name = h('input', { name: 'name', value: String(d.name ?? ''), placeholder: 'e.g. Daily digest' });
  const tags = h('input', { name: 'tags', value: ((d.tags as string[] | undefined) ?? []).join(', '), placeholder: 'a, b' });
  const type = h('select', { name: 'trigger_type' }, ...FORM_TRIGGERS.map((t) => h('option', { value: t, selected: t === startType }, TRIGGER_LABELS[t])));
  const cron = h('input', { name: 'expression', value: startType === 'cron' ? String(trig.expression ?? '') : '0 9 * * 1-5', placeholder: '5 or 6 fields', autocomplete: 'off' });
  const zone = h('input', { name: 'timezone', value: String(trig.timezone ?? viewerZone()), placeholder: 'IANA zone, e.g. Asia/Shanghai' });
  const every = h('input', { name: 'every_s', type: 'number', min: 1, value: startType === 'interval' ? String(trig.every_s ?? '') : '3600' });
  const at = h('input', { name: 'at', type: 'datetime-local', step: 1, value: startType === 'at' && trig.at ? isoToLocal(String(trig.at)) : '' });
  const triggerJson = textarea('trigger', pretty(trig), 6);
  const agent = textarea('agent', pretty(d.agent ?? NEW_AGENT), 7);
  const delivery = textarea('delivery', pretty(d.delivery ?? []), 4);
  const timeout = h('input', { name: 'timeout_s', type: 'number', min: 1, value: String(d.timeout_s ?? ''), placeholder: 'default 900' });
  const enabled = h('input', { name: 'enabled', type: 'checkbox', id: 'task-form-enabled', checked: current ? current.enabled : true });
  const preview = cronPreview(cron, zone);

  const parts: Record<FormTrigger, HTMLElement> = {
    cron: h('div', { class: 'trigger-part cron-row' }, h('div', { class: 'cron-fields' }, errors.field('Expression', 'trigger.expression', cron), errors.field('Time zone', 'trigger.timezone', zone)), preview.box),
    interval: h('div', { class: 'trigger-part' }, errors.field('Every (seconds)', 'trigger.every_s', every)),
    at: h('div', { class: 'trigger-part' }, errors.field(`At (${viewerZone()})`, 'trigger.at', at)),
    json: h('div', { class: 'trigger-part' }, errors.field('Trigger (JSON)', 'trigger', triggerJson, 'e.g. {"type": "delay", "event": "deploy_finished", "seconds": 600}')),
  };
  const showType = () => {
    for (const [k, el] of Object.entries(parts)) el.hidden = k !== type.value;
    if (type.value === 'cron') preview.update();
  };
  type.addEventListener('change', showType);
  showType();

  /** The trigger the form describes; a stored trigger's other settings (dom_dow, stagger, mode) are kept when its type stays. */
  const trigger = (): Json | undefined => {
    const t = type.value as FormTrigger;
    const keep = trig.type === t ? trig : {};
    if (t === 'cron') return { ...keep, type: 'cron', expression: cron.value.trim(), timezone: zone.value.trim() || 'UTC' };
    if (t === 'interval') return { ...keep, type: 'interval', every_s: every.value === '' ? undefined : Number(every.value) };
    if (t === 'at') {
      const iso = localToIso(at.value);
      if (!iso) {
        errors.at('trigger.at', 'is required: a date and time');
        return undefined;
      }
      // The same instant as stored stays as stored: sent again, a past `at` would be refused.
      return trig.type === 'at' && Date.parse(String(trig.at)) === Date.parse(iso) ? trig : { type: 'at', at: iso };
    }
    const p = parseJson(errors, 'trigger', triggerJson.value);
    return p.ok ? (p.value as Json) : undefined;
  };

  const submit = h('button', { type: 'submit' }, current ? 'Save changes' : 'Create task');
  const form = editing(h(
    'form',
    {
      class: 'panel task-form',
      id: 'task-form',
      novalidate: true,
      onsubmit: async (ev: Event) => {
        ev.preventDefault();
        errors.clear();
        const t = trigger();
        const a = parseJson(errors, 'agent', agent.value);
        const del = parseJson(errors, 'delivery', delivery.value);
        if (!t || !a.ok || !del.ok) return;
        const fields: Json = {
          name: name.value.trim() || undefined,
          tags: tags.value.split(',').map((s) => s.trim()).filter(Boolean),
          trigger: t,
          agent: withoutSecretMarkers(a.value),
          delivery: withoutSecretMarkers(del.value),
          timeout_s: timeout.value === '' ? undefined : Number(timeout.value),
          enabled: enabled.checked,
        };
        await sending(submit, errors, async () => {
          if (current) {
            // Only what changed: an unchanged agent or delivery keeps its stored secrets.
            const before: Json = { name: d.name, tags: d.tags ?? [], trigger: trig, agent: withoutSecretMarkers(d.agent), delivery: withoutSecretMarkers(d.delivery ?? []), timeout_s: d.timeout_s, enabled: current.enabled };
            const patch = Object.fromEntries(Object.entries(fields).filter(([k, v]) => v !== undefined && JSON.stringify(v) !== JSON.stringify(before[k])));
            if (!Object.keys(patch).length) return go(['tasks', current.task_id]);
            await tk().call('patchTask', { params: { id: current.task_id }, body: patch as PatchBody });
            go(['tasks', current.task_id]);
          } else {
            const body = { ...fields, task_id: taskId.value.trim() || undefined } as CreateBody;
            const made = await tk().call('createTask', { body });
            go(['tasks', made.body.task_id]);
          }
        });
      },
    },
    h('h2', {}, current ? 'Change this task' : 'New task'),
    errors.general,
    h(
      'div',
      { class: 'form-grid' },
      current ? null : errors.field('Task id', 'task_id', taskId),
      errors.field('Name', 'name', name),
      errors.field('Tags', 'tags', tags),
      errors.field('Timeout (seconds)', 'timeout_s', timeout),
      h('label', { class: 'field check', for: 'task-form-enabled' }, h('span', {}, 'Enabled'), enabled),
    ),
    h('fieldset', { class: 'trigger' }, h('legend', {}, 'Trigger'), errors.field('Kind', 'trigger.type', type), ...Object.values(parts)),
    h('div', { class: 'form-grid wide' }, errors.field('Agent (JSON)', 'agent', agent, 'openai, webhook, openclaw or digest; see docs/api.md'), errors.field('Delivery (JSON)', 'delivery', delivery, 'a target or a list: webhook, session, file, table')),
    h('div', { class: 'toolbar' }, submit, h('a', { class: 'btn secondary', href: current ? href(['tasks', current.task_id]) : href(['tasks']) }, 'Cancel')),
  ));
  return form;
}
