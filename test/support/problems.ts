/** What tests check of a refusal sent raw (a body the contract's types do not allow). */
import type { RawResponse } from '../../sdk/client';

/**
 * A problem of `status` (application/problem+json, the status repeated in the body). With
 * `field`: the first error names that field (else the test fails with the answer in the
 * message), and the body carries the whole problem shape (code, detail, type).
 */
export function expectProblem(r: RawResponse, status: number, field?: string): void {
  if (field !== undefined && (r.status !== status || r.body?.errors?.[0]?.field !== field)) {
    throw new Error(`expected ${status} naming ${field}, got ${r.status} ${JSON.stringify(r.body).slice(0, 400)}`);
  }
  expect(r.status).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(r.body.status).toBe(status);
  if (field === undefined) return;
  expect(r.body.code).toBe(status);
  expect(typeof r.body.detail).toBe('string');
  expect(r.body.type).toMatch(/^https:\/\/timekeeper\.dev\/problems\//);
}
