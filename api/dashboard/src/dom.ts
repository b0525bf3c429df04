/** Small DOM helpers: elements from data (text is always text, never HTML), times in two zones, folded JSON. */

type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

/** An element: `h('a', { href: '#/x', class: 'btn' }, 'text', child)`. `on*` attributes become listeners. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.slice(2).toLowerCase(), v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

/** Replaces an element's children. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

export const viewerZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'local';

const pad = (n: number) => String(n).padStart(2, '0');
function parts(d: Date, zone: string | undefined): string {
  const f = new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(d);
  const g = (t: string) => f.find((p) => p.type === t)?.value ?? '';
  return `${g('year')}-${g('month')}-${g('day')} ${g('hour')}:${g('minute')}:${g('second')}`;
}

/** A time as `<time>`: the viewer's zone first, UTC beside it, the ISO instant as its title. */
export function time(t: number | string | null | undefined): Node {
  if (t === null || t === undefined) return h('span', { class: 'muted' }, '—');
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return h('span', {}, String(t));
  const ms = d.getUTCMilliseconds();
  const local = parts(d, undefined);
  const utc = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return h(
    'time',
    { datetime: d.toISOString(), title: d.toISOString(), class: 'when' },
    h('span', { class: 'local' }, local),
    ms ? h('span', { class: 'ms' }, `.${String(ms).padStart(3, '0')}`) : null,
    ' ',
    h('span', { class: 'utc' }, `${utc} UTC`),
  );
}

/** Milliseconds as words: 850 ms, 12.3 s, 4 min 2 s, 3 h 5 min. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  const sign = ms < 0 ? '−' : '';
  const a = Math.abs(ms);
  if (a < 1000) return `${sign}${Math.round(a)} ms`;
  if (a < 60_000) return `${sign}${(a / 1000).toFixed(1)} s`;
  if (a < 3_600_000) return `${sign}${Math.floor(a / 60_000)} min ${Math.round((a % 60_000) / 1000)} s`;
  return `${sign}${Math.floor(a / 3_600_000)} h ${Math.round((a % 3_600_000) / 60_000)} min`;
}

export const shortHash = (hash: string | null | undefined): Node =>
  hash ? h('code', { class: 'hash', title: hash }, hash.slice(0, 12)) : h('span', { class: 'muted' }, '—');

/** A one-line preview of a JSON value. */
export function preview(v: unknown, max = 120): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  const one = (s ?? String(v)).replace(/\s+/g, ' ');
  return one.length > max ? `${one.slice(0, max)}…` : one;
}

/** A value folded to one line, expanded to pretty JSON on click (a native, keyboard-reachable <details>). */
export function folded(v: unknown, open = false): Node {
  const pretty = typeof v === 'string' ? v : JSON.stringify(v, null, 2);
  return h('details', { class: 'fold', open }, h('summary', {}, preview(v)), h('pre', {}, pretty));
}

/** A status as a coloured label. */
export const badge = (text: string, kind = text): Node => h('span', { class: `badge b-${kind.replace(/[^a-z0-9_-]/gi, '')}` }, text);

export const empty = (text: string): Node => h('p', { class: 'empty', role: 'status' }, text);

/** A labelled form control. */
export function field(label: string, control: HTMLElement): Node {
  return h('label', { class: 'field' }, h('span', {}, label), control);
}

export function select(name: string, options: readonly string[], value: string, allLabel = 'any'): HTMLSelectElement {
  return h('select', { name }, h('option', { value: '' }, allLabel), ...options.map((o) => h('option', { value: o, selected: o === value }, o)));
}

export function input(name: string, value: string, placeholder = '', type = 'text'): HTMLInputElement {
  return h('input', { name, value, placeholder, type });
}

export const button = (label: string, onclick: () => void | Promise<void>, attrs: Attrs = {}): HTMLButtonElement =>
  h('button', { type: 'button', ...attrs, onclick: () => void onclick() }, label);
