/**
 * The zod shapes of the two signal triggers, `delay` and `condition` (lib/domain/signals/index.ts,
 * lib/domain/tasks/conditions.ts), for the task definition's TriggerSchema
 * (lib/task-definition-schema.ts re-exports them). A condition node is
 * told apart by its key (`all`, `any`, `signal`, `task_id`, `window`) and then parsed with
 * that node's strict schema, so a refusal names the exact field (trigger.when.all.0.op),
 * not "matches none of five shapes". Rules beyond shape (ordering ops on numbers, HH:MM,
 * nesting, the zone) are conditionProblems / delayProblems.
 */
import { z } from 'zod';
import { mistyped, required } from '../platform/refusals';
import { COMPARE_OPS, type ConditionNode } from './conditions';
import { LIMITS } from '../limits';
import { SIGNAL_NAME_RE, SIGNAL_NAME_RULE } from '../signals';
import { TASK_ID_RE, TASK_ID_RULE } from './index';

const signalName = z.string(required(' (a signal name)')).regex(SIGNAL_NAME_RE, SIGNAL_NAME_RULE);
const secondsUpTo = (min: number, max = LIMITS.signalTriggerMaxS) =>
  z.number(mistyped('must be a number of seconds')).min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);

export const DelayTriggerSchema = z.strictObject({
  type: z.literal('delay'),
  event: signalName.describe('the signal name (POST /v1/signals `name`) that starts the wait'),
  seconds: secondsUpTo(0).describe('the wait from the event to the run'),
  deduplicate: z.boolean().default(false).describe('events with the same dedupe key arriving while a run waits join it'),
  dedupe_key: z.string().min(1).max(200).optional().describe('template over the event: {{name}}, {{value}}, {{values.<field>}}; default one key for all events of the name'),
});

const SignalLeafSchema = z.strictObject({
  signal: signalName,
  op: z.enum(COMPARE_OPS),
  value: z.union([z.number(), z.string().max(LIMITS.signalStringMaxChars), z.boolean()], { error: 'must be a number, a string or a boolean' }),
  field: z.string().min(1).max(64).optional().describe('compare values.<field> instead of value'),
  for_s: secondsUpTo(0).default(0).describe('the comparison must hold this long (signal times)'),
});
const RunsLeafSchema = z.strictObject({
  task_id: z.string(required()).regex(TASK_ID_RE, TASK_ID_RULE),
  status: z.enum(['failed', 'success']),
  consecutive: z.number().int().min(1).max(1000).default(1),
});
const WindowLeafSchema = z.strictObject({
  window: z.strictObject({
    days: z.array(z.number().int().min(0).max(6)).min(1).max(7).default([0, 1, 2, 3, 4, 5, 6]).describe('0 = Sunday … 6 = Saturday'),
    from: z.string().default('00:00').describe('local HH:MM, inclusive'),
    to: z.string().default('24:00').describe('local HH:MM, exclusive; before `from` spans midnight'),
  }),
});
const group = () => z.array(ConditionNodeSchema).min(1, 'must list at least one condition').max(LIMITS.conditionNodesMax);
const AllSchema = z.strictObject({ get all() {
  return group();
} });
const AnySchema = z.strictObject({ get any() {
  return group();
} });

const BY_KEY: [string, () => z.ZodType][] = [
  ['all', () => AllSchema],
  ['any', () => AnySchema],
  ['signal', () => SignalLeafSchema],
  ['task_id', () => RunsLeafSchema],
  ['window', () => WindowLeafSchema],
];
const NODE_RULE = 'must be one of {"all": [...]}, {"any": [...]}, {"signal", "op", "value", "for_s"?}, {"task_id", "status", "consecutive"}, {"window": {"days", "from", "to"}}';

export const ConditionNodeSchema: z.ZodType<ConditionNode> = z
  .unknown()
  .transform((v, ctx) => {
    const key = v !== null && typeof v === 'object' && !Array.isArray(v) ? BY_KEY.find(([k]) => k in v) : undefined;
    if (!key) {
      ctx.addIssue({ code: 'custom', message: NODE_RULE });
      return z.NEVER;
    }
    const r = key[1]().safeParse(v);
    if (!r.success) {
      for (const i of r.error.issues) ctx.addIssue(i as never);
      return z.NEVER;
    }
    return r.data as ConditionNode;
  })
  .meta({ description: `a condition: ${NODE_RULE}` }) as unknown as z.ZodType<ConditionNode>;

export const ConditionTriggerSchema = z.strictObject({
  type: z.literal('condition'),
  when: ConditionNodeSchema,
  timezone: z.string().max(64).default('UTC').describe('IANA zone of the windows and the time context'),
  delay_s: secondsUpTo(0).default(0).describe('wait between the condition holding and the run'),
  cooldown_s: secondsUpTo(0).default(0).describe('after a fire, no new fire for this long; 0: only after the condition was false in between'),
});

/** The OpenAPI examples of the two triggers (also in docs/api.md). */
export const SIGNAL_TRIGGER_EXAMPLES = {
  delay: { type: 'delay', event: 'deploy_finished', seconds: 600, deduplicate: true, dedupe_key: '{{values.host}}' },
  condition: {
    type: 'condition',
    when: {
      all: [
        { signal: 'error_rate', op: '>', value: 0.05, for_s: 180 },
        { window: { days: [1, 2, 3, 4, 5], from: '09:00', to: '18:00' } },
      ],
    },
    timezone: 'Asia/Shanghai',
    delay_s: 30,
    cooldown_s: 600,
  },
  runOutcome: {
    type: 'condition',
    when: { all: [{ task_id: 'crawler', status: 'failed', consecutive: 3 }, { window: { days: [1, 2, 3, 4, 5], from: '09:00', to: '18:00' } }] },
    timezone: 'Asia/Shanghai',
    cooldown_s: 3600,
  },
} as const;
