/** Intents (the OML-compatible /api/* routes): the pending banner, the filtered list with lifecycles, one intent's transitions. */
import type { ResponseBody } from '../../../sdk/client';
import { INTENT_STATUSES } from '../../../lib/domain/intents';
import { go, href, tk, type Page } from './app';
import { badge, empty, field, folded, h, input, select, shortHash, time } from './dom';

type Intent = ResponseBody<'listIntents'>['events'][number];
type Transition = ResponseBody<'getIntent'>['transitions'][number];

const PAGE = 25;

/** The banner at the top of every page: how many intents are still requested or in progress. */
export async function pendingBanner(): Promise<Node> {
  const stats = await tk().intents.stats();
  const n = stats.pending;
  return h(
    'a',
    { class: `banner ${n ? 'has-pending' : 'none-pending'}`, id: 'pending-banner', href: href(['intents'], { pending: '1' }), 'data-count': String(n) },
    n === 1 ? '1 pending intent' : `${n} pending intents`,
    h('span', { class: 'muted' }, ` (requested or in progress; ${stats.total} in all) — show them`),
  );
}

const lifecycle = (i: Intent): Node =>
  h('span', { class: 'lifecycle', title: i.lifecycle_text }, ...i.lifecycle.flatMap((s, n) => [n ? h('span', { class: 'arrow' }, ' → ') : null, badge(s)]));

function intentTable(rows: Intent[]): Node {
  return h(
    'table',
    { class: 'list', id: 'intents-table' },
    h('thead', {}, h('tr', {}, ...['Intent', 'Domain', 'Action', 'Status', 'Lifecycle', 'Tags', 'Updated'].map((t) => h('th', { scope: 'col' }, t)))),
    h(
      'tbody',
      {},
      ...rows.map((i) =>
        h(
          'tr',
          { 'data-intent': i.event_id },
          h('td', {}, h('a', { href: href(['intents', i.event_id]) }, i.event_id)),
          h('td', {}, i.domain),
          h('td', {}, i.action),
          h('td', {}, badge(i.status)),
          h('td', {}, lifecycle(i)),
          h('td', {}, i.tags.length ? i.tags.map((t) => h('span', { class: 'tag' }, t)) : '—'),
          h('td', {}, time(i.updated_ts)),
        ),
      ),
    ),
  );
}

export const intentsPage: Page = async ({ route }) => {
  const q = route.query;
  const f = { domain: q.get('domain') ?? '', status: q.get('status') ?? '', tags: q.get('tags') ?? '', search: q.get('search') ?? '' };
  const pending = q.get('pending') === '1';
  const offset = Number(q.get('offset') ?? 0) || 0;

  const domain = input('domain', f.domain, 'e.g. communication');
  const status = select('status', INTENT_STATUSES, f.status);
  const tags = input('tags', f.tags, 'a,b (all must match)');
  const search = input('search', f.search, 'action or note', 'search');
  const form = h(
    'form',
    {
      class: 'filters',
      'aria-label': 'Intent filters',
      onsubmit: (e: Event) => {
        e.preventDefault();
        // The pending view (GET /api/events/pending) filters by domain only; it stays the pending view.
        if (pending) go(['intents'], { pending: '1', domain: domain.value.trim() });
        else go(['intents'], { domain: domain.value.trim(), status: status.value, tags: tags.value.trim(), search: search.value.trim() });
      },
    },
    field('Domain', domain),
    pending ? null : [field('Status', status), field('Tags', tags), field('Search', search)],
    h('button', { type: 'submit' }, 'Filter'),
    h('a', { href: href(['intents']), class: 'btn secondary' }, 'Clear'),
    pending ? h('a', { href: href(['intents']), class: 'btn secondary' }, 'All intents') : h('a', { href: href(['intents'], { pending: '1' }), class: 'btn secondary' }, 'Pending only'),
  );

  if (pending) {
    const rows = await tk().intents.pending({ domain: f.domain || undefined, limit: 500 });
    return h(
      'div',
      {},
      h('h1', {}, 'Intents ', h('span', { class: 'muted' }, '— pending (requested or in progress), oldest first')),
      form,
      h('p', { class: 'count', id: 'intents-count' }, `${rows.length} pending`),
      rows.length ? intentTable(rows) : empty('Nothing is pending: every intent is done or blocked.'),
    );
  }

  const res = await tk().intents.list({
    domain: f.domain || undefined,
    status: (f.status || undefined) as Intent['status'] | undefined,
    tags: f.tags || undefined,
    search: f.search || undefined,
    limit: PAGE,
    offset,
  });
  const pager = h(
    'nav',
    { class: 'pager', 'aria-label': 'Pages' },
    offset > 0 ? h('a', { class: 'btn secondary', href: href(['intents'], { ...f, offset: String(Math.max(0, offset - PAGE)) || undefined }) }, '← Previous') : null,
    offset + res.events.length < res.total ? h('a', { class: 'btn secondary', href: href(['intents'], { ...f, offset: String(offset + PAGE) }) }, 'Next →') : null,
  );
  return h(
    'div',
    {},
    h('h1', {}, 'Intents'),
    form,
    h('p', { class: 'count', id: 'intents-count' }, res.total ? `${offset + 1}–${offset + res.events.length} of ${res.total}` : '0 intents'),
    res.events.length ? intentTable(res.events) : empty('No intents match these filters.'),
    pager,
  );
};

// ---- one intent ---------------------------------------------------------------------------

/** The structured part of a blocked transition: error, next step, retry time; the rest folded. */
function transitionData(t: Transition): Node {
  const d = t.data;
  if (!Object.keys(d).length) return h('span', { class: 'muted' }, '—');
  if (t.to !== 'blocked') return folded(d);
  const { error, next_step, retry_after, retry, ...rest } = d;
  return h(
    'dl',
    { class: 'blocked' },
    error !== undefined ? [h('dt', {}, 'error'), h('dd', {}, String(error))] : null,
    next_step !== undefined ? [h('dt', {}, 'next step'), h('dd', {}, String(next_step))] : null,
    retry !== undefined ? [h('dt', {}, 'retry'), h('dd', {}, String(retry))] : null,
    retry_after !== undefined ? [h('dt', {}, 'retry after'), h('dd', {}, typeof retry_after === 'string' || typeof retry_after === 'number' ? time(retry_after) : String(retry_after))] : null,
    Object.keys(rest).length ? [h('dt', {}, 'more'), h('dd', {}, folded(rest))] : null,
  );
}

export const intentPage: Page = async ({ route }) => {
  const id = route.path[1];
  const i = await tk().intents.get(id);
  const next = i.workflow.next;
  const expiry =
    next?.action === 'expire'
      ? [time(next.at), h('span', { class: 'muted' }, ` (blocked as expired if still ${i.status} then; ttl ${i.ttl_s} s)`)]
      : [h('span', { class: 'muted' }, i.status === 'requested' || i.status === 'in-progress' ? `ttl ${i.ttl_s} s` : `none: the intent is ${i.status} (ttl ${i.ttl_s} s while open)`)];
  return h(
    'div',
    {},
    h('p', {}, h('a', { href: href(['intents']) }, '← Intents')),
    h('h1', {}, 'Intent ', h('code', {}, i.event_id), ' ', badge(i.status)),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Domain'), h('dd', {}, i.domain),
      h('dt', {}, 'Action'), h('dd', {}, i.action),
      h('dt', {}, 'Lifecycle'), h('dd', { id: 'lifecycle' }, i.lifecycle_text),
      h('dt', {}, 'Tags'), h('dd', {}, i.tags.length ? i.tags.map((t) => h('span', { class: 'tag' }, t)) : '—'),
      h('dt', {}, 'Created'), h('dd', {}, time(i.created_ts)),
      h('dt', {}, 'Updated'), h('dd', {}, time(i.updated_ts)),
      h('dt', {}, 'Expires'), h('dd', { id: 'expiry' }, ...expiry),
      h('dt', {}, 'Next timer'), h('dd', {}, next ? [`${next.action} at `, time(next.at)] : h('span', { class: 'muted' }, i.workflow.open ? 'none' : 'workflow closed')),
      h('dt', {}, 'Session'), h('dd', {}, i.session_id ? h('a', { href: href(['sessions', i.session_id]) }, i.session_id) : '—'),
      h('dt', {}, 'Dedupe key'), h('dd', {}, i.dedupe_key ?? '—'),
      h('dt', {}, 'Data'), h('dd', {}, Object.keys(i.data).length ? folded(i.data, true) : '—'),
      h('dt', {}, 'Chain head'), h('dd', {}, `seq ${i.seq} `, shortHash(i.hash)),
    ),
    h('h2', {}, `Transitions (${i.transitions.length})`),
    h(
      'table',
      { class: 'list', id: 'transitions' },
      h('thead', {}, h('tr', {}, ...['Seq', 'Time', 'From → to', 'Actor', 'Note', 'Data', 'Hash'].map((t) => h('th', { scope: 'col' }, t)))),
      h(
        'tbody',
        {},
        ...i.transitions.map((t) =>
          h(
            'tr',
            { 'data-seq': String(t.seq) },
            h('td', { class: 'num' }, String(t.seq)),
            h('td', {}, time(t.ts)),
            h('td', {}, t.from ? [badge(t.from), ' → '] : null, badge(t.to)),
            h('td', {}, t.actor),
            h('td', {}, t.note ?? '—'),
            h('td', {}, transitionData(t)),
            h('td', {}, shortHash(t.hash)),
          ),
        ),
      ),
    ),
  );
};
