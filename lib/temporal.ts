/** Temporal set-up shared by the API, the tests and the tools. */
import type { ConnectionLike } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from './search-attributes';

/**
 * Registers the Keyword search attributes sessions are tagged with, when missing. The dev
 * server gets them on its command line; a production cluster gets them here or from its
 * set-up job, whichever runs first.
 */
export async function ensureSearchAttributes(connection: ConnectionLike, namespace: string): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = SEARCH_ATTRIBUTES.filter((name) => !(name in (existing.customAttributes ?? {})));
  if (missing.length === 0) return;
  const Keyword = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((n) => [n, Keyword])),
    });
  } catch (err) {
    // Another process added them between our list and our add.
    if (!/already exists/i.test((err as Error).message)) throw err;
  }
}
