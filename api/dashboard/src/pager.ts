/**
 * The pager under a list page (sessions, tasks, runs): Previous/Next links over keyset cursors,
 * the way back kept in the URL. Shared by the pages (issue 21), so the tasks page no longer
 * takes it from the sessions page.
 */
import { href } from './app';
import { h } from './dom';

/**
 * Cursor paging with a way back: `back` is the list of cursors before this page
 * (`-` for the first page), so Previous pops one and Next pushes this page's.
 */
export function pagerNav(path: string[], filters: Record<string, string>, cursor: string | undefined, back: string, nextCursor: string | null): Node {
  const stack = back ? back.split(',') : [];
  const prev = stack.at(-1);
  return h(
    'nav',
    { class: 'pager', 'aria-label': 'Pages' },
    cursor ? h('a', { class: 'btn secondary', href: href(path, { ...filters, cursor: prev && prev !== '-' ? prev : undefined, back: stack.slice(0, -1).join(',') || undefined }) }, '← Previous') : null,
    nextCursor ? h('a', { class: 'btn secondary', href: href(path, { ...filters, cursor: nextCursor, back: [...stack, cursor ?? '-'].join(',') }) }, 'Next →') : null,
  );
}
