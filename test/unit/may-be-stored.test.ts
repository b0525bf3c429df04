/** Every 503 to a write says whether the write may be stored (api/problem.ts, issue 16). */
import { withStorageAnswer } from '../../api/problem';
import { DomainError, ErrorCode } from '../../lib/domain/errors';

const unavailable = new DomainError(ErrorCode.Unavailable, 'the event database is not reachable; retry shortly');

test.each(['POST', 'PATCH', 'PUT', 'DELETE'])('a 503 to %s without an answer of its own says may_be_stored: true', (method) => {
  expect(withStorageAnswer(unavailable, 503, method).extra).toEqual({ may_be_stored: true });
});

test('write_failed (the database refused it) says nothing was stored', () => {
  expect(withStorageAnswer(new DomainError(ErrorCode.WriteFailed, 'nothing was stored'), 503, 'POST').extra).toEqual({ may_be_stored: false });
});

test("the thrower's own answer is kept (admission refusals, reads before sending)", () => {
  expect(withStorageAnswer(unavailable.withExtra({ may_be_stored: false }), 503, 'PATCH').extra).toEqual({ may_be_stored: false });
});

test('reads and other statuses are left alone', () => {
  expect(withStorageAnswer(unavailable, 503, 'GET').extra).toBeUndefined();
  expect(withStorageAnswer(new DomainError(ErrorCode.Validation, 'bad'), 400, 'POST').extra).toBeUndefined();
});
