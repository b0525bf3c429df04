/** Sessions: the filtered, paged list; one session's timeline with its verification badge, LLM context and workflow link. */
import type { ResponseBody } from '../../../sdk/client';
import { TIMELINE_STATUSES } from '../../../lib/domain/sessions';
import { errorBox, go, href, tk, type Page } from './app';
import { badge, button, empty, fill, field, folded, h, input, preview, select, shortHash, time } from './dom';
import { pagerNav } from './pager';

type Session = ResponseBody<'listSessions'>['sessions'][number];
type TimelineEvent = ResponseBody<'listEvents'>['events'][number];

const PAGE = 25;

export const sessionsPage: Page = async ({ route }) => {
  const q = route.query;
  const filters = { status: q.get('status') ?? '', agent_id: q.get('agent_id') ?? '', channel: q.get('channel') ?? '', text: q.get('text') ?? '' };
  const cursor = q.get('cursor') ?? undefined;
  const back = q.get('back') ?? '';
  const res = await tk().listSessions({
    status: (filters.status || undefined) as Session['status'] | undefined,
    agent_id: filters.agent_id || undefined,
    channel: filters.channel || undefined,
    cursor,
    limit: PAGE,
  });
  const text = filters.text.toLowerCase();
  const shown = text ? res.sessions.filter((s) => JSON.stringify([s.session_id, s.agent_id, s.channel, s.metadata]).toLowerCase().includes(text)) : res.sessions;

  const status = select('status', TIMELINE_STATUSES, filters.status);
  const agent = input('agent_id', filters.agent_id, 'agent id');
  const channel = input('channel', filters.channel, 'channel');
  const textBox = input('text', filters.text, 'id, agent, channel, metadata', 'search');
  const form = h(
    'form',
    {
      class: 'filters',
      'aria-label': 'Session filters',
      onsubmit: (e: Event) => {
        e.preventDefault();
        go(['sessions'], { status: status.value, agent_id: agent.value.trim(), channel: channel.value.trim(), text: textBox.value.trim() });
      },
    },
    field('Status', status),
    field('Agent', agent),
    field('Channel', channel),
    field('Text (this page)', textBox),
    h('button', { type: 'submit' }, 'Filter'),
    h('a', { href: href(['sessions']), class: 'btn secondary' }, 'Clear'),
  );

  const pager = pagerNav(['sessions'], filters, cursor, back, res.next_cursor);

  const table = shown.length
    ? h(
        'table',
        { class: 'list', id: 'sessions-table' },
        h('thead', {}, h('tr', {}, ...['Session', 'Status', 'Agent', 'Channel', 'Events (head)', 'Created', 'Last event'].map((t) => h('th', { scope: 'col' }, t)))),
        h(
          'tbody',
          {},
          ...shown.map((s) =>
            h(
              'tr',
              { 'data-session': s.session_id },
              h('td', {}, h('a', { href: href(['sessions', s.session_id]) }, s.session_id)),
              h('td', {}, badge(s.status)),
              h('td', {}, s.agent_id ?? '—'),
              h('td', {}, s.channel ?? '—'),
              h('td', { class: 'num' }, s.head ? String(s.head.seq) : '—'),
              h('td', {}, time(s.created_ts)),
              h('td', {}, time(s.head?.ts)),
            ),
          ),
        ),
      )
    : empty(res.sessions.length ? 'No session on this page matches the text filter.' : 'No sessions match these filters.');

  return h('div', {}, h('h1', {}, 'Sessions'), form, table, pager);
};


// ---- one session --------------------------------------------------------------------------

const EVENTS_PAGE = 200;

export const sessionPage: Page = async ({ route }) => {
  const id = route.path[1];
  const client = tk();
  const s = await client.session(id);
  const events: TimelineEvent[] = [];
  let next: number | null = 0;
  const list = h('ol', { class: 'timeline', id: 'timeline' });
  const more = h('div', { class: 'more' });
  const context = h('section', { class: 'panel', id: 'context', 'aria-labelledby': 'ctx-title' });
  const verifyBox = h('div', { class: 'verify', id: 'verify', 'aria-live': 'polite' });

  const showContext = async (asOf: number) => {
    fill(context, h('h2', { id: 'ctx-title' }, `LLM context as of seq ${asOf}`), h('p', { class: 'muted' }, 'Loading…'));
    try {
      const c = await client.context(id, { as_of_seq: asOf });
      fill(
        context,
        h('h2', { id: 'ctx-title' }, `LLM context as of seq ${c.as_of.seq ?? asOf}`),
        h('p', { class: 'muted' }, `${c.events_included} events included${c.truncated ? ' (truncated)' : ''}; as of `, time(c.as_of.ts)),
        h('pre', { class: 'context-text' }, c.text || '(empty)'),
        h(
          'details',
          { 'data-key': 'ctx-messages' },
          h('summary', {}, `${c.messages.length} messages`),
          h('ol', { class: 'messages' }, ...c.messages.map((m) => h('li', {}, h('strong', {}, m.role), ` (seq ${m.seq}) `, m.content))),
        ),
      );
    } catch (e) {
      fill(context, h('h2', { id: 'ctx-title' }, `LLM context as of seq ${asOf}`), errorBox(e));
    }
  };

  // When the writer said when the event happened, that first and the stored time beside it (an outbox may deliver late).
  const eventTimes = (e: TimelineEvent): Node[] =>
    e.occurred_at === null
      ? [time(e.ts)]
      : [h('span', { class: 'occurred', title: 'when it happened, as its writer said' }, 'occurred ', time(e.occurred_at)), h('span', { class: 'muted', title: 'when Timekeeper stored it (the order)' }, 'stored ', time(e.ts))];

  const renderEvent = (e: TimelineEvent) =>
    h(
      'li',
      { class: `ev ev-${e.type}`, 'data-seq': String(e.seq) },
      h('div', { class: 'ev-head' }, h('span', { class: 'seq' }, `#${e.seq}`), badge(e.type, 'type'), ...eventTimes(e), shortHash(e.hash), button('Context as of here', () => showContext(e.seq), { class: 'small secondary' })),
      h('details', { class: 'fold', 'data-key': `ev-${e.seq}` }, h('summary', {}, preview(e.content)), h('pre', {}, JSON.stringify(e.content, null, 2)), e.idempotency_key ? h('p', { class: 'muted' }, `idempotency key ${e.idempotency_key}`) : null),
    );

  const loadMore = async () => {
    if (next === null) return;
    const page = await client.events(id, { after_seq: next, limit: EVENTS_PAGE });
    events.push(...page.events);
    for (const e of page.events) list.append(renderEvent(e));
    next = page.next_after_seq;
    fill(more, next !== null ? button(`Load more (after seq ${next})`, () => loadMore().catch((err: unknown) => fill(more, errorBox(err)))) : events.length ? null : empty('This session has no events.'));
  };
  await loadMore();

  /**
   * Where the chain stands in the transparency log: witnessed (its checkpoint carries the quorum
   * of configured witnesses' cosignatures, counted by verify), only signed by the log, or not
   * yet in any checkpoint (the builder takes new records within seconds).
   */
  const logBadge = (log: Awaited<ReturnType<typeof client.verify>>['log']): Node => {
    const cp = log.checkpoint;
    if (!cp || log.proven === 0) return h('span', { class: 'badge b-pending', id: 'log-badge', 'data-state': 'unlogged', title: 'the log builder has not taken these events into a checkpoint yet' }, 'not yet in a checkpoint');
    if (cp.witnessed) return h('span', { class: 'badge b-witnessed', id: 'log-badge', 'data-state': 'witnessed', title: `checkpoint ${cp.tree_size} is cosigned by ${cp.cosignatures} witnesses (the quorum)` }, `✓ witnessed (${cp.cosignatures} cosignature${cp.cosignatures === 1 ? '' : 's'})`);
    return h('span', { class: 'badge b-signed', id: 'log-badge', 'data-state': 'signed', title: `checkpoint ${cp.tree_size} is signed by the log; no quorum of witnesses has cosigned it` }, 'signed by the log, not witnessed');
  };

  const runVerify = async () => {
    fill(verifyBox, badge('verifying…', 'pending'));
    try {
      const v = await client.verify(id);
      if (v.ok) {
        fill(
          verifyBox,
          h('span', { class: 'badge b-ok', id: 'verify-badge' }, `✓ chain verified: ${v.checked} events`),
          v.anchor ? h('span', { class: 'muted' }, ` head matches the workflow (seq ${v.anchor.seq})`) : null,
          ' ',
          logBadge(v.log),
          h('span', { class: 'muted', id: 'verify-log' }, v.log.checkpoint ? ` ${v.log.proven} in checkpoint ${v.log.checkpoint.tree_size}${v.log.pending ? `, ${v.log.pending} pending` : ''}` : ''),
          ' ',
          button('Verify again', runVerify, { class: 'small secondary' }),
        );
      } else {
        fill(
          verifyBox,
          h('span', { class: 'badge b-bad', id: 'verify-badge' }, `✗ chain broken at seq ${v.first_bad_seq ?? '?'}`),
          ' ',
          h('span', {}, `${v.reason ?? ''}${v.detail ? `: ${v.detail}` : ''}`),
          v.first_bad_seq !== undefined ? h('a', { href: `#/sessions/${encodeURIComponent(id)}`, class: 'small', onclick: (ev: Event) => { ev.preventDefault(); document.querySelector(`[data-seq="${v.first_bad_seq}"]`)?.scrollIntoView(); } }, ' show that event') : null,
          ' ',
          button('Verify again', runVerify, { class: 'small secondary' }),
        );
      }
    } catch (e) {
      fill(verifyBox, errorBox(e));
    }
  };
  void runVerify();

  const asOf = h('input', { type: 'number', min: '1', name: 'as_of_seq', value: String(s.head?.seq ?? 1), 'aria-label': 'as of seq' });
  fill(
    context,
    h('h2', { id: 'ctx-title' }, 'LLM context'),
    h(
      'form',
      { class: 'filters', onsubmit: (ev: Event) => { ev.preventDefault(); void showContext(Number(asOf.value)); } },
      h('label', { class: 'field' }, h('span', {}, 'As of seq'), asOf),
      h('button', { type: 'submit' }, 'Show context'),
    ),
    h('p', { class: 'muted' }, 'Or press "Context as of here" on any event.'),
  );

  const byType = Object.entries(s.counts.by_type).map(([t, n]) => `${t} ${n}`).join(', ');
  return h(
    'div',
    {},
    h('p', {}, h('a', { href: href(['sessions']) }, '← Sessions')),
    h('h1', {}, 'Session ', h('code', {}, s.session_id), ' ', badge(s.status)),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Agent'), h('dd', {}, s.agent_id ?? '—'),
      h('dt', {}, 'Channel'), h('dd', {}, s.channel ?? '—'),
      h('dt', {}, 'Created'), h('dd', {}, time(s.created_ts)),
      h('dt', {}, 'Archived'), h('dd', {}, time(s.archived_ts)),
      h('dt', {}, 'Head'), h('dd', {}, s.head ? [`seq ${s.head.seq} `, shortHash(s.head.hash)] : '—'),
      h('dt', {}, 'Events'), h('dd', {}, `${s.counts.events}${byType ? ` (${byType})` : ''}`),
      h('dt', {}, 'Metadata'), h('dd', {}, Object.keys(s.metadata).length ? folded(s.metadata) : '—'),
      h('dt', {}, 'Chain'), h('dd', {}, verifyBox),
      h('dt', {}, 'Workflow'), h('dd', {}, h('a', { href: s.workflow.ui_url, target: '_blank', rel: 'noopener noreferrer', id: 'workflow-link' }, `${s.workflow.workflow_id} in the Temporal Web UI ↗`), s.workflow.status ? ` (${s.workflow.status})` : ''),
    ),
    h('div', { class: 'two-col' }, h('section', { 'aria-labelledby': 'tl-title' }, h('h2', { id: 'tl-title' }, 'Timeline'), list, more), context),
  );
};
