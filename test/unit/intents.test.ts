/** The intent rules without any server: the state machine, field rules, blocked data, the hash mapping and the context words. */
import { intentRoutes } from '../../api/intents/contract';
import { intentTools } from '../../sdk/intents/tools';
import { formatLine } from '../../api/sessions/context';
import { ErrorCode } from '../../lib/domain/errors';
import {
  INTENT_ID_RE,
  INTENT_STATUSES,
  NEXT_STATES,
  blockedInfo,
  canTransition,
  dataProblem,
  parseInstant,
  transitionProblem,
  transitionRequestProblem,
  type IntentStatus,
} from '../../lib/domain/intents';
import { APPENDABLE_EVENT_TYPES, EventType, appendRequestProblem } from '../../lib/domain/sessions';
import { computeTransitionHash, transitionChainEvent, verifyChain } from '../../lib/hash-chain';

describe('the state machine', () => {
  const legal: [IntentStatus, IntentStatus][] = [
    ['requested', 'in-progress'],
    ['requested', 'done'],
    ['requested', 'blocked'],
    ['in-progress', 'done'],
    ['in-progress', 'blocked'],
    ['blocked', 'requested'],
    ['blocked', 'done'],
  ];
  test('exactly the documented transitions are legal', () => {
    for (const from of INTENT_STATUSES) {
      for (const to of INTENT_STATUSES) {
        const expected = legal.some(([f, t]) => f === from && t === to);
        expect([from, to, canTransition(from, to)]).toEqual([from, to, expected]);
      }
    }
    expect(NEXT_STATES.done).toEqual([]);
  });

  test('an illegal transition is invalid_transition naming the current state and the allowed next states', () => {
    const e = transitionProblem('X-1', 'blocked', 'in-progress')!;
    expect(e.code).toBe(ErrorCode.InvalidTransition);
    expect(e.extra).toEqual({ current_status: 'blocked', allowed_next: ['requested', 'done'] });
    expect(e.message).toBe('intent X-1 is blocked; it cannot become in-progress (allowed next: requested, done)');
    expect(transitionProblem('X-1', 'done', 'requested')!.message).toMatch(/none, it is final/);
    expect(transitionProblem('X-1', 'requested', 'done')).toBeNull();
  });
});

describe('transition requests', () => {
  const req = (to: string, data: Record<string, unknown> = {}, note?: unknown) =>
    transitionRequestProblem({ transitionId: '00000000-0000-4000-8000-000000000000', to: to as IntentStatus, data: data as never, note: note as string });
  test.each([
    ['finished', {}, undefined, 'status'],
    ['blocked', {}, undefined, 'data.error'],
    ['blocked', { error: 'e' }, undefined, 'data.next_step'],
    ['blocked', { error: 'e', next_step: '' }, undefined, 'data.next_step'],
    ['blocked', { error: 'e', next_step: 'n', retry: 'true' }, undefined, 'data.retry'],
    ['blocked', { error: 'e', next_step: 'n', retry_after: '2023-10-27 12:05' }, undefined, 'data.retry_after'],
    ['blocked', { error: 'e', next_step: 'n', retry_after: '2023-10-27T12:05:00' }, undefined, 'data.retry_after'],
    ['done', { bad: 'a\u0000b' }, undefined, 'data.bad'],
    ['done', {}, 'x'.repeat(4001), 'note'],
    ['done', {}, 'a\u0000', 'note'],
  ])('%s %j note %j → refused naming %s', (to, data, note, field) => {
    expect(req(to, data, note)?.errors[0].field).toBe(field);
  });
  test('good requests pass', () => {
    expect(req('done', { result: [1, 2] }, 'ok')).toBeNull();
    expect(req('blocked', { error: 'e', next_step: 'n', retry: true, retry_after: '2023-10-27T12:05:00+02:00' })).toBeNull();
  });
  test('data must be an object within the size limit', () => {
    expect(dataProblem([1])?.errors[0].reason).toBe('must be a JSON object');
    expect(dataProblem({ s: 'x'.repeat(70_000) })?.code).toBe(ErrorCode.TooLarge);
  });
  test('retry_after parses with a zone only; blockedInfo reads retry and the time', () => {
    expect(parseInstant('2023-10-27T12:05:00Z')).toBe(Date.UTC(2023, 9, 27, 12, 5));
    expect(parseInstant('2023-10-27T12:05:00.5+01:00')).toBe(Date.UTC(2023, 9, 27, 11, 5, 0, 500));
    expect(parseInstant('2023-10-27')).toBeUndefined();
    expect(parseInstant(1698408300000)).toBeUndefined();
    expect(blockedInfo({ error: 'e', next_step: 'n', retry: true, retry_after: '2023-10-27T12:05:00Z' })).toEqual({ error: 'e', next_step: 'n', retry: true, retryAtMs: Date.UTC(2023, 9, 27, 12, 5) });
    expect(blockedInfo({ error: 'e', next_step: 'n', retry: 'yes' }).retry).toBe(false);
  });
});

describe('the contract', () => {
  const body = intentRoutes.createIntent.body;
  test('unknown fields are ignored as OML does; tags must be strings; event_id follows the safe set', () => {
    expect(body.safeParse({ event_id: 'OPS-20231027-001', domain: 'ops', action: 'deploy', timestamp: 'x' }).success).toBe(true);
    expect(body.safeParse({ event_id: 'OPS/1', domain: 'ops', action: 'deploy' }).success).toBe(false);
    expect(body.safeParse({ event_id: 'OPS-1', domain: 'ops', action: 'deploy', tags: [1] }).success).toBe(false);
    expect(body.safeParse({ event_id: 'A'.repeat(200), domain: 'ops', action: 'deploy' }).success).toBe(true);
  });
});

describe('the intent chain uses the timeline hash rule', () => {
  const t1 = { event_id: 'R-1', seq: 1, transition_id: '11111111-1111-4111-8111-111111111111', ts: 1000, prev_hash: null, content: { from: null, to: 'requested' as const, note: null, data: {}, actor: 'agent' as const } };
  test('a chain of transitions verifies, and a changed note breaks it at that seq', () => {
    const h1 = computeTransitionHash(t1);
    const t2 = { ...t1, seq: 2, transition_id: '22222222-2222-4222-8222-222222222222', ts: 1001, prev_hash: h1, content: { ...t1.content, from: 'requested' as const, to: 'done' as const, note: 'ok' } };
    const chain = [
      { ...t1, hash: h1 },
      { ...t2, hash: computeTransitionHash(t2) },
    ];
    expect(verifyChain('intent:R-1', chain.map(transitionChainEvent)).ok).toBe(true);
    const tampered = [chain[0], { ...chain[1], content: { ...chain[1].content, note: 'forged' } }];
    expect(verifyChain('intent:R-1', tampered.map(transitionChainEvent))).toMatchObject({ ok: false, first_bad_seq: 2, reason: 'content_changed' });
    // A transition cannot be passed off as another intent's.
    expect(verifyChain('intent:R-2', chain.map(transitionChainEvent)).ok).toBe(false);
  });
});

describe('INTENT_TRANSITION in sessions', () => {
  test("the session workflow accepts it from Timekeeper's own writers (system), callers cannot name it", () => {
    expect(APPENDABLE_EVENT_TYPES).not.toContain(EventType.IntentTransition);
    const req = { eventId: '11111111-1111-4111-8111-111111111111', type: EventType.IntentTransition, content: {} };
    expect(appendRequestProblem({ ...req, system: true }, 1000)).toBeNull();
    expect(appendRequestProblem(req, 1000)?.errors[0]?.field).toBe('event_type');
  });
  test('the LLM context shows it in words', () => {
    const e = { session_id: 's', seq: 3, event_id: 'x', event_type: 'INTENT_TRANSITION', ts: 0, prev_hash: null, hash: 'h', idempotency_key: null };
    expect(formatLine({ ...e, content: { event_id: 'EMAIL-1', action: 'send', from: null, to: 'requested', note: null, actor: 'agent' } }, 'en')).toBe('Intent EMAIL-1 (send): new → requested');
    expect(formatLine({ ...e, content: { event_id: 'EMAIL-1', action: 'send', from: 'blocked', to: 'requested', note: 'retry_after reached', actor: 'system' } }, 'en')).toBe(
      'Intent EMAIL-1 (send): blocked → requested: retry_after reached (by Timekeeper)',
    );
    expect(formatLine({ ...e, content: { event_id: 'EMAIL-1', action: 'send', from: 'requested', to: 'done', note: null, actor: 'agent' } }, 'zh')).toBe('意图 EMAIL-1 (send): requested → done');
  });
});

describe('tool definitions', () => {
  test('the four OML tools, with JSON Schemas generated from the contracts', () => {
    const tools = intentTools();
    expect(tools.map((t) => t.name)).toEqual(['log_event_requested', 'log_event_done', 'log_event_blocked', 'pending_intents']);
    const req = tools[0].parameters as { properties: Record<string, { pattern?: string; maxItems?: number }>; required: string[] };
    expect(req.required).toEqual(expect.arrayContaining(['event_id', 'domain', 'action']));
    expect(req.properties.status).toBeUndefined();
    expect(req.properties.event_id.pattern).toBe(INTENT_ID_RE.source);
    expect(req.properties.tags.maxItems).toBe(32);
    const blocked = tools[2].parameters as { properties: { error_data: { required: string[] } } };
    expect(blocked.properties.error_data.required).toEqual(['error', 'next_step']);
    expect(tools[1].route).toEqual({ method: 'PATCH', path: '/api/events/:eventId/status' });
  });
});
