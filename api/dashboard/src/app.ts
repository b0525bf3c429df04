/** What every page shares: the typed client with the stored key, the hash route, and how failures are shown. */
import { TimekeeperApiError, TimekeeperClient } from '../../../sdk/client';
import { button, h } from './dom';

const KEY = 'timekeeper.apiKey';

export function storedKey(): string {
  try {
    return localStorage.getItem(KEY) ?? '';
  } catch {
    return '';
  }
}

export function storeKey(key: string): void {
  if (key) localStorage.setItem(KEY, key);
  else localStorage.removeItem(KEY);
}

/** The one typed client (sdk/client.ts), against the API that served this page. */
export function tk(): TimekeeperClient {
  const apiKey = storedKey();
  return new TimekeeperClient({ baseUrl: location.origin, apiKey: apiKey || undefined, timeoutMs: 30_000 });
}

export interface Route {
  /** e.g. ['tasks', 'daily-digest'] */
  path: string[];
  query: URLSearchParams;
}

export function currentRoute(): Route {
  const raw = location.hash.replace(/^#\/?/, '');
  const [p, q = ''] = raw.split('?', 2);
  const path = p.split('/').filter(Boolean).map((s) => decodeURIComponent(s));
  return { path: path.length ? path : ['sessions'], query: new URLSearchParams(q) };
}

/** A hash link: `link(['sessions', id], { status: 'open' })`. */
export function href(path: string[], query: Record<string, string | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v) q.set(k, v);
  const s = q.toString();
  return `#/${path.map(encodeURIComponent).join('/')}${s ? `?${s}` : ''}`;
}

export function go(path: string[], query: Record<string, string | undefined> = {}): void {
  const next = href(path, query);
  if (location.hash === next) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = next;
}

/** Raised to show the "enter a key" panel instead of a page. */
export class NeedsKey extends Error {}

/** A failure as the user should read it. */
export function describeError(e: unknown): { title: string; detail: string; needsKey: boolean } {
  if (e instanceof TimekeeperApiError) {
    if (e.status === 401) return { title: 'An API key is needed', detail: storedKey() ? `The API refused the stored key: ${e.detail}` : 'This Timekeeper has API keys configured. Enter one to load data.', needsKey: true };
    if (e.status === 403) return { title: 'Not allowed with this key', detail: `${e.detail} (the key lacks the scope this view needs)`, needsKey: false };
    const fields = e.errors.map((f) => `${f.field}: ${f.reason}`).join('; ');
    return { title: `HTTP ${e.status} ${e.errorCode}`, detail: fields ? `${e.detail} — ${fields}` : e.detail, needsKey: false };
  }
  if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) return { title: 'The API did not answer in time', detail: e.message, needsKey: false };
  if (e instanceof TypeError) return { title: 'The API is not reachable', detail: `${e.message}. Is Timekeeper running?`, needsKey: false };
  return { title: 'Something went wrong', detail: e instanceof Error ? e.message : String(e), needsKey: false };
}

/** An inline error box (for a part of a page). */
export function errorBox(e: unknown): Node {
  const d = describeError(e);
  return h('div', { class: 'error', role: 'alert' }, h('strong', {}, d.title), ' ', d.detail);
}

/** The key form: stored in localStorage, then the page reloads its data. */
export function keyForm(onSaved: () => void, message?: { title: string; detail: string }): Node {
  const field = h('input', { type: 'password', name: 'api-key', id: 'api-key', autocomplete: 'off', placeholder: 'API key', value: storedKey() });
  const form = h(
    'form',
    {
      class: 'keyform',
      onsubmit: (ev: Event) => {
        ev.preventDefault();
        storeKey(field.value.trim());
        onSaved();
      },
    },
    h('label', { for: 'api-key' }, 'API key'),
    field,
    h('button', { type: 'submit' }, 'Save key'),
    storedKey() ? button('Forget key', () => { storeKey(''); onSaved(); }, { class: 'secondary' }) : null,
  );
  return h(
    'section',
    { class: 'panel keyprompt', 'aria-labelledby': 'key-title' },
    h('h2', { id: 'key-title' }, message?.title ?? 'API key'),
    h('p', {}, message?.detail ?? 'The key is kept in this browser (localStorage) and sent as a Bearer token with every request.'),
    form,
  );
}

export interface PageContext {
  route: Route;
  /** Render the current route again (after an action). */
  refresh: () => void;
}

export type Page = (ctx: PageContext) => Promise<Node>;
