/**
 * The Timekeeper dashboard: a framework-free single-page app over the typed client
 * (sdk/client.ts). Hash routes: #/sessions[/id], #/intents[/id], #/tasks[/id], #/state,
 * #/artifacts; filters live in the hash's query, so a refresh (manual or every 30 s) keeps them.
 */
import { currentRoute, describeError, href, keyForm, storedKey, type Page } from './app';
import { fill, h, viewerZone } from './dom';
import { intentPage, intentsPage, pendingBanner } from './intents';
import { sessionPage, sessionsPage } from './sessions';
import { taskPage, tasksPage } from './tasks';
import { artifactsPage, statePage } from './workspace';

const REFRESH_MS = 30_000;
const REFRESH_KEY = 'timekeeper.autoRefresh';

const SECTIONS: { path: string; label: string; list: Page; detail?: Page }[] = [
  { path: 'sessions', label: 'Sessions', list: sessionsPage, detail: sessionPage },
  { path: 'intents', label: 'Intents', list: intentsPage, detail: intentPage },
  { path: 'tasks', label: 'Tasks', list: tasksPage, detail: taskPage },
  { path: 'state', label: 'State', list: statePage },
  { path: 'artifacts', label: 'Artifacts', list: artifactsPage },
];

const root = document.getElementById('app') as HTMLElement;
const nav = h('nav', { class: 'tabs', 'aria-label': 'Sections' });
const banner = h('div', { class: 'banner-slot' });
const main = h('main', { id: 'main', tabindex: '-1' });
const status = h('span', { class: 'muted', id: 'status', 'aria-live': 'polite' });
const keyButton = h('button', { type: 'button', class: 'secondary small', id: 'key-button' });
const autoBox = h('input', { type: 'checkbox', id: 'auto-refresh' });
let timer: number | undefined;
let rendering = 0;

function header(): Node {
  return h(
    'header',
    { class: 'top' },
    h('a', { class: 'skip', href: '#main', onclick: (e: Event) => { e.preventDefault(); main.focus(); } }, 'Skip to content'),
    h('a', { class: 'brand', href: href(['sessions']) }, 'Timekeeper'),
    nav,
    h(
      'div',
      { class: 'controls' },
      h('span', { class: 'muted small', title: 'Every time is shown in your zone, then in UTC' }, `Times: ${viewerZone()} · UTC`),
      h('label', { class: 'switch', for: 'auto-refresh' }, autoBox, ' Auto-refresh (30 s)'),
      h('button', { type: 'button', class: 'secondary small', id: 'refresh', onclick: () => void render() }, 'Refresh'),
      keyButton,
    ),
  );
}

function drawNav(section: string): void {
  fill(nav, ...SECTIONS.map((s) => h('a', { href: href([s.path]), 'aria-current': s.path === section ? 'page' : undefined }, s.label)));
  keyButton.textContent = storedKey() ? 'API key ✓' : 'API key';
}

/** Remembers which folded parts were open, so a refresh does not close what the user is reading. */
function openKeys(): Set<string> {
  return new Set([...main.querySelectorAll('details[open][data-key]')].map((d) => d.getAttribute('data-key') ?? ''));
}

async function render(opts: { keepOpen?: boolean } = {}): Promise<void> {
  const mine = ++rendering;
  const route = currentRoute();
  const section = SECTIONS.find((s) => s.path === route.path[0]);
  drawNav(section?.path ?? '');
  const wasOpen = opts.keepOpen ? openKeys() : new Set<string>();
  status.textContent = 'Loading…';
  // A new page: drop the old one at once, so nothing stale is read (or clicked) while this one loads.
  if (!opts.keepOpen) fill(main, h('p', { class: 'muted loading' }, 'Loading…'));
  main.setAttribute('aria-busy', 'true');

  // The banner loads beside the page; a failure there (no key, no scope) just hides it.
  pendingBanner()
    .then((b) => mine === rendering && fill(banner, b))
    .catch(() => mine === rendering && fill(banner));

  let content: Node;
  try {
    if (!section) throw new Error(`no page at #/${route.path.join('/')}`);
    const page = route.path.length > 1 && section.detail ? section.detail : section.list;
    content = await page({ route, refresh: () => void render({ keepOpen: true }) });
  } catch (e) {
    const d = describeError(e);
    content = d.needsKey
      ? keyForm(() => void render(), d)
      : h('section', { class: 'error', role: 'alert', id: 'page-error' }, h('h2', {}, d.title), h('p', {}, d.detail), h('button', { type: 'button', onclick: () => void render() }, 'Try again'));
  }
  if (mine !== rendering) return; // a newer render started meanwhile
  fill(main, content);
  for (const d of main.querySelectorAll('details[data-key]')) if (wasOpen.has(d.getAttribute('data-key') ?? '')) d.setAttribute('open', '');
  main.setAttribute('aria-busy', 'false');
  status.textContent = `Updated ${new Date().toLocaleTimeString()}`;
}

function setAutoRefresh(on: boolean): void {
  autoBox.checked = on;
  localStorage.setItem(REFRESH_KEY, on ? '1' : '0');
  if (timer !== undefined) window.clearInterval(timer);
  // Not over what the user is typing: a form being edited keeps its page until they leave it.
  timer = on ? window.setInterval(() => void (main.querySelector('form[data-editing]') ? undefined : render({ keepOpen: true })), REFRESH_MS) : undefined;
}

keyButton.addEventListener('click', () => fill(main, keyForm(() => void render())));
autoBox.addEventListener('change', () => setAutoRefresh(autoBox.checked));
window.addEventListener('hashchange', () => void render());

fill(root, header(), banner, main, h('footer', {}, status));
setAutoRefresh(localStorage.getItem(REFRESH_KEY) === '1');
void render();
