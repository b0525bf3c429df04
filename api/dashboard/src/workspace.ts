/** The agent's workspace as OML shows it: STATE.md rendered, and the ARTIFACTS folder (Markdown inline, other files downloaded). */
import { describeError, errorBox, storedKey, tk, type Page } from './app';
import { button, empty, fill, h, time } from './dom';

/** HTML the API rendered from Markdown and sanitised (lib/workspace.ts); the page's CSP blocks script besides. */
function rendered(html: string): HTMLElement {
  const div = h('div', { class: 'markdown' });
  div.innerHTML = html;
  for (const a of div.querySelectorAll('a[href]')) {
    a.setAttribute('rel', 'noopener noreferrer');
    a.setAttribute('target', '_blank');
  }
  return div;
}

export const statePage: Page = async () => {
  const s = (await tk().call('workspaceState')).body;
  return h(
    'div',
    {},
    h('h1', {}, 'State'),
    h('p', { class: 'muted' }, h('code', {}, s.path), s.modified ? [' — modified ', time(s.modified)] : null),
    s.exists ? (s.raw.trim() ? h('article', { class: 'panel', id: 'state' }, rendered(s.html)) : empty('STATE.md is empty.')) : empty(`There is no STATE.md yet (STATE_MD_PATH is ${s.path}).`),
  );
};

/**
 * A non-Markdown artifact is an attachment the API sends as bytes; a link cannot carry the
 * Bearer key, so it is fetched with the key and handed to the browser as a download.
 */
async function download(name: string, out: HTMLElement): Promise<void> {
  const key = storedKey();
  const res = await fetch(`/api/artifacts/${encodeURIComponent(name)}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  if (!res.ok) {
    fill(out, h('div', { class: 'error', role: 'alert' }, `Download failed: HTTP ${res.status}`));
    return;
  }
  const url = URL.createObjectURL(await res.blob());
  const a = h('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export const artifactsPage: Page = async ({ route }) => {
  const { files } = (await tk().call('listArtifacts')).body;
  const viewer = h('section', { class: 'panel', id: 'artifact-view', 'aria-live': 'polite' });
  const open = async (name: string) => {
    fill(viewer, h('p', { class: 'muted' }, `Loading ${name}…`));
    try {
      const a = (await tk().call('getArtifact', { params: { filename: name } })).body;
      fill(viewer, h('h2', {}, a.name), h('p', { class: 'muted' }, `${a.size} bytes, modified `, time(a.modified)), rendered(a.html));
    } catch (e) {
      fill(viewer, errorBox(e));
    }
  };
  const wanted = route.query.get('file');
  if (wanted && files.some((f) => f.name === wanted && f.markdown)) void open(wanted);
  else fill(viewer, empty(files.some((f) => f.markdown) ? 'Choose a Markdown file to read it here.' : 'Markdown files open here.'));
  return h(
    'div',
    {},
    h('h1', {}, 'Artifacts'),
    files.length
      ? h(
          'table',
          { class: 'list', id: 'artifacts-table' },
          h('thead', {}, h('tr', {}, ...['File', 'Size', 'Modified', ''].map((t) => h('th', { scope: 'col' }, t)))),
          h(
            'tbody',
            {},
            ...files.map((f) => {
              const out = h('span', {});
              return h(
                'tr',
                { 'data-file': f.name },
                h('td', {}, f.name),
                h('td', { class: 'num' }, `${f.size} B`),
                h('td', {}, time(f.modified)),
                h(
                  'td',
                  {},
                  f.markdown
                    ? button('Read', () => open(f.name), { class: 'small', 'aria-label': `Read ${f.name}` })
                    : button('Download', () => download(f.name, out).catch((e: unknown) => fill(out, h('span', { class: 'error' }, describeError(e).title))), { class: 'small secondary', 'aria-label': `Download ${f.name}` }),
                  out,
                ),
              );
            }),
          ),
        )
      : empty('The artifacts folder is empty.'),
    viewer,
  );
};
