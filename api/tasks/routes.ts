/** The /v1 scheduled-task routes: tasks, their runs, and the schedule preview. */
import { Router } from 'express';
import type { TaskClient } from '../../clients/tasks';
import { LIMITS } from '../../lib/domain/limits';
import { agentTaskCountProblem } from '../../lib/agent-task-bounds';
import { DomainError, ErrorCode } from '../../lib/domain/errors';
import { staggerOffsetS } from '../../lib/domain/tasks/stagger';
import { TASK_ID_RE, describeCron, describeTrigger, formatDuration, runId as runIdOf, schedulerWorkflowId, taskErrors, type AgentAnswer, type CronTrigger } from '../../lib/domain/tasks';
import { timeNow as timeNowOf } from '../../lib/domain/tasks/time-now';
import { backfillFireTimes, cronFireTimes, fireTimes, previewCount } from '../../lib/domain/tasks/schedule';
import type { ListedRun, RunKey, RunRow, TaskRow, TaskStore } from '../../lib/store/tasks';
import { DEFAULT_LIST_ORDER, TASK_LIST_ORDERS, type TaskListOrder } from '../../lib/domain/list-order';
import { badCursor, decodeKeyset, encodeKeyset, pageOrder, parseCursor, type Keyset } from '../../lib/platform/keyset';
import type { TaskResultStore } from '../../lib/store/tasks/results';
import type { TlogStore } from '../../lib/store/tlog';
import { NO_WITNESSES, type WitnessTrust } from '../../lib/tlog/chain-check';
import type { TaskPolicy } from '../../lib/task-policy';
import { shownDefinition, withoutSecrets, type TaskSecrets } from '../../lib/task-secrets';
import { mayAccess, outOfBounds, ownerForCreate, principalOf, type KeyStore, type Principal } from '../auth';
import { sessionErrors } from '../../lib/domain/sessions';
import type { SessionStore } from '../../lib/store/sessions';
import type { TaskDefinition } from '../../lib/domain/tasks';
import { jsonBody, parse, queryObject } from '../http';
import { route } from '../router';
import { keyAgentId } from './creator';
import { defaultAgentProblem, definitionOf, type DefinitionDefaults } from '../../lib/task-definition';
import {
  backfillTask,
  createTask,
  deleteTask,
  getRun,
  getTask,
  listRuns,
  listTaskResults,
  listTaskRuns,
  listTasks,
  patchTask,
  pauseTask,
  previewSchedule,
  reportRunResult,
  resumeTask,
  timeNow,
  triggerTask,
  verifyRun,
  verifyTask,
} from './contract';

export interface TaskDeps {
  tasks: TaskClient;
  store: TaskStore;
  results: TaskResultStore;
  keys: KeyStore;
  /** Sessions a task names (its session_id, session deliveries), checked against a bound key's agents. */
  sessions: SessionStore;
  /** OUTBOUND_ALLOW_HOSTS and AGENT_SECRETS, checked on every definition, and the agent bounds of agents' tasks (lib/task-policy.ts). */
  policy: TaskPolicy;
  /** Operator defaults a definition is completed with (TASK_DEFAULT_AGENT). */
  defaults?: DefinitionDefaults;
  /** Seals the HMAC secrets a definition carries before it is stored (lib/task-secrets.ts). */
  secrets: TaskSecrets;
  /** log_index of history and run log rows, and their verify against the transparency log. */
  tlog: TlogStore;
  /** LOG_WITNESSES' keys and LOG_WITNESS_QUORUM (verify counts the cosignatures itself). */
  witnessTrust?: WitnessTrust;
}

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/** A task list cursor: ours, or a bare task id (the id order's cursor, as before lists took an order). */
function taskCursor(c: string): Keyset<TaskListOrder> {
  const k = decodeKeyset(c, TASK_LIST_ORDERS, (id) => TASK_ID_RE.test(id));
  if (k) return k;
  if (TASK_ID_RE.test(c)) return { time: 0, id: c, order: 'id' };
  throw badCursor();
}

/** Run lists have one order (newest first); the cursor's order is always that one. */
function runCursor(c: string): RunKey {
  const k = parseCursor(c, ['newest'], (id) => /^\d{1,19}$/.test(id));
  return { us: k.time, id: k.id };
}

export function taskRouter({ tasks, store, results, sessions, keys, policy, secrets, tlog, witnessTrust = NO_WITNESSES, defaults = {} }: TaskDeps): Router {
  const r = Router();
  const agentProblem = defaults.agent && defaultAgentProblem(defaults.agent);
  if (agentProblem) throw new Error(`TASK_DEFAULT_AGENT is not an agent a task could use: ${agentProblem}`);
  /** Warnings go in the answer only when there are some. */
  const warned = <T extends object>(body: T, warnings: { field: string; reason: string }[]) => (warnings.length ? { ...body, warnings } : body);

  /** The task, if it exists and is within the key's agent bounds; 404 alike otherwise. */
  async function mustExist(id: string, p: Principal): Promise<TaskRow> {
    const t = await store.getTask(id);
    if (!t || !mayAccess(p, t.definition.agent_id)) throw taskErrors.notFound(id);
    return t;
  }

  /** The run, if its task is within the key's agent bounds; 404 alike otherwise. */
  async function mustBeOwnRun(id: string, p: Principal): Promise<RunRow> {
    const run = await store.getRun(id);
    if (!run || (p.bounds && !mayAccess(p, (await store.getTask(run.task_id))?.definition.agent_id))) throw taskErrors.runNotFound(id);
    return run;
  }

  /**
   * A definition a bound key stores: its owner within the bounds (filled in from a key bound to
   * one agent), and what it reaches of other agents' data refused: the sessions it writes into
   * (session_id, session deliveries: 404 as for an unknown session) and a digest over runs it
   * could not read (the digest must name its tasks, each within the bounds).
   */
  async function owned(d: TaskDefinition, p: Principal): Promise<TaskDefinition> {
    const agentId = ownerForCreate(p, d.agent_id);
    const out = agentId === undefined ? d : { ...d, agent_id: agentId };
    if (!p.bounds) return out;
    const sessionIds = [d.session_id, ...d.delivery.map((t) => (t.type === 'session' ? t.session_id : undefined))].filter((x): x is string => x !== undefined);
    for (const sid of new Set(sessionIds)) {
      const t = await sessions.getTimeline(sid);
      if (!t || !mayAccess(p, t.agent_id)) throw sessionErrors.notFound(sid);
    }
    if (d.agent.type === 'digest') {
      if (!d.agent.task_ids) throw outOfBounds(p.bounds, 'agent.task_ids', '(every task)');
      for (const [i, id] of d.agent.task_ids.entries()) {
        const t = await store.getTask(id);
        if (!t || !mayAccess(p, t.definition.agent_id)) throw outOfBounds(p.bounds, `agent.task_ids[${i}]`, id);
      }
    }
    return out;
  }
  const idOf = (raw: string | string[] | undefined) => parse(getTask.params.shape.id, raw, 'task_id');

  function nextFires(t: TaskRow, n: number): number[] {
    if (!t.enabled || t.deleted) return [];
    const d = t.definition;
    const now = Date.now();
    const lastStart = t.last_run?.started_at?.getTime();
    return fireTimes(d.trigger, d.calendar, now, n, Infinity, { lastFireMs: lastStart ?? t.created_at.getTime() });
  }

  function describe(t: TaskRow) {
    const next = nextFires(t, 1)[0];
    return {
      task_id: t.task_id,
      name: t.definition.name,
      status: t.status,
      enabled: t.enabled,
      deleted: t.deleted,
      version: t.version,
      definition: shownDefinition(t.definition),
      trigger_text: describeTrigger(t.definition.trigger),
      last_run: t.last_run
        ? { run_id: t.last_run.run_id, status: t.last_run.status, scheduled_at: t.last_run.nominal_at.toISOString(), started_at: iso(t.last_run.started_at), finished_at: iso(t.last_run.finished_at) }
        : null,
      next_run: next === undefined ? null : new Date(next).toISOString(),
      created_at: t.created_at.toISOString(),
      updated_at: t.updated_at.toISOString(),
      last_change: { action: t.last_action, reason: t.reason },
      parent_run_id: t.definition.parent_run_id ?? null,
      created_by: t.created_by,
    };
  }

  async function detail(t: TaskRow) {
    const [history, state] = await Promise.all([store.history(t.task_id), t.deleted ? undefined : tasks.schedulerState(t.task_id, t.version)]);
    const logged = await tlog.logIndexes(2, t.task_id, history.map((h) => h.version));
    return {
      ...describe(t),
      next_fire_times: nextFires(t, LIMITS.taskNextFireTimesShown).map((x) => new Date(x).toISOString()),
      history: history.map((h) => ({ ...h, recorded_at: h.recorded_at.toISOString(), log_index: logged.get(h.version) ?? null })),
      scheduler: {
        workflow_id: schedulerWorkflowId(t.task_id),
        running_runs: state?.running ?? null,
        next_fire_at: state?.nextFireMs ? new Date(state.nextFireMs).toISOString() : null,
      },
    };
  }

  /**
   * A create's answer, from what was stored and the definition alone: its one history row,
   * no runs, the next fire time computed here. Not the scheduler's own view, which a create
   * would wait for (a query to the workflow it just started, answered once a worker ran its
   * first workflow task): GET /v1/tasks/:id asks the scheduler.
   */
  function created(t: TaskRow) {
    const next = nextFires(t, LIMITS.taskNextFireTimesShown).map((x) => new Date(x).toISOString());
    return {
      ...describe(t),
      next_fire_times: next,
      history: [{ version: t.version, action: t.last_action, enabled: t.enabled, deleted: t.deleted, reason: t.reason, recorded_at: t.created_at.toISOString(), log_index: null }],
      scheduler: { workflow_id: schedulerWorkflowId(t.task_id), running_runs: [], next_fire_at: next[0] ?? null },
    };
  }

  const runOf = (x: RunRow) => ({
    run_id: x.run_id,
    task_id: x.task_id,
    status: x.status,
    reason: x.reason,
    trigger: x.trigger,
    scheduled_at: x.nominal_at.toISOString(),
    started_at: iso(x.started_at),
    finished_at: iso(x.finished_at),
    lateness_ms: x.lateness_ms,
    duration_ms: x.duration_ms,
    attempt: x.attempt,
    processed: x.processed,
    error_count: x.error_count,
    summary: x.summary,
    result: (x.result ?? null) as never,
    needs_attention: x.needs_attention,
    updated_at: x.recorded_at.toISOString(),
    created_by: x.created_by,
  });

  /** A page of runs fetched with one row more than `limit`: the extra one says a next page exists. */
  const runPage = (rows: ListedRun[], limit: number) => {
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { runs: page.map(runOf), next_cursor: rows.length > limit ? encodeKeyset({ time: last.key.us, id: last.key.id, order: 'newest' }) : null };
  };

  route(r, keys, createTask, async (req, res) => {
    const { definition, enabled, warnings, createdBy } = definitionOf(jsonBody(req), Date.now(), policy, { created_by: keyAgentId(res) }, defaults);
    if (createdBy && policy.agentBounds) {
      // Counted before the insert: two creates racing for the last place may both pass (one task over, never more per race).
      const problem = agentTaskCountProblem(createdBy, await store.countCreatedBy(createdBy), policy.agentBounds);
      if (problem) throw new DomainError(ErrorCode.Validation, `${problem.field}: ${problem.reason}`, [problem]);
    }
    const t = await tasks.create(secrets.forStorage(await owned(definition, principalOf(res))), enabled, createdBy);
    res.status(201).location(`/v1/tasks/${encodeURIComponent(t.task_id)}`).json(warned(created(t), warnings));
  });

  route(r, keys, listTasks, async (req, res) => {
    const q = parse(listTasks.query, queryObject(req));
    const limit = q.limit ?? LIMITS.pageDefault;
    const cursor = q.cursor === undefined ? undefined : taskCursor(q.cursor);
    const order = pageOrder(q.order, cursor, DEFAULT_LIST_ORDER);
    const after = cursor && { createdUs: cursor.time, taskId: cursor.id };
    const rows = await store.listTasks({ status: q.status, tag: q.tag, enabled: q.enabled, createdBy: q.created_by, bounds: principalOf(res).bounds, order, after, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    // The id order's cursor stays a bare task id, as it was before lists took an order.
    const next = rows.length <= limit ? null : order === 'id' ? last.task_id : encodeKeyset({ time: last.created_us, id: last.task_id, order });
    res.json({ tasks: page.map(describe), next_cursor: next });
  });

  route(r, keys, getTask, async (req, res) => {
    res.json(await detail(await mustExist(idOf(req.params.id), principalOf(res))));
  });

  route(r, keys, patchTask, async (req, res) => {
    const current = await mustExist(idOf(req.params.id), principalOf(res));
    if (current.deleted) throw taskErrors.deleted(current.task_id);
    const patch = parse(patchTask.body, jsonBody(req)) as Record<string, unknown>;
    // The raw body, so the merged definition is validated exactly as a create would be.
    const raw = jsonBody(req) as Record<string, unknown>;
    // Stored secrets stay out of the merge: only the request's own are sealed; omitted ones are kept.
    const { parent_run_id, ...stored } = withoutSecrets(current.definition);
    const merged: Record<string, unknown> = { ...stored, enabled: current.enabled };
    for (const k of Object.keys(patch)) {
      if (raw[k] === null) delete merged[k];
      else merged[k] = raw[k];
    }
    merged.task_id = current.task_id;
    // An agent's task stays inside the agent bounds after any PATCH, whoever sends it.
    const { definition, enabled, warnings } = definitionOf(merged, Date.now(), policy, { parent_run_id, created_by: current.created_by ?? undefined }, defaults);
    const checked = await owned(definition, principalOf(res));
    res.json(warned(await detail(await tasks.update(current, secrets.forStorage(checked, current.definition), enabled)), warnings));
  });

  route(r, keys, deleteTask, async (req, res) => {
    res.json(await detail(await tasks.delete(await mustExist(idOf(req.params.id), principalOf(res)))));
  });

  route(r, keys, pauseTask, async (req, res) => {
    res.json(await detail(await tasks.pause(await mustExist(idOf(req.params.id), principalOf(res)))));
  });

  route(r, keys, resumeTask, async (req, res) => {
    res.json(await detail(await tasks.resume(await mustExist(idOf(req.params.id), principalOf(res)))));
  });

  route(r, keys, triggerTask, async (req, res) => {
    const { runId } = await tasks.trigger(await mustExist(idOf(req.params.id), principalOf(res)));
    const url = `/v1/runs/${encodeURIComponent(runId)}`;
    res.status(202).location(url).json({ run_id: runId, url });
  });

  route(r, keys, backfillTask, async (req, res) => {
    const current = await mustExist(idOf(req.params.id), principalOf(res));
    if (current.deleted) throw taskErrors.deleted(current.task_id);
    const b = parse(backfillTask.body, jsonBody(req));
    const d = current.definition;
    const times = backfillFireTimes(d.trigger, d.calendar, Date.parse(b.from), Date.parse(b.to), Date.now());
    const { started, alreadyRun } = await tasks.backfill(current, times);
    const view = (t: number) => ({ scheduled_at: new Date(t).toISOString(), run_id: runIdOf(d.task_id, t) });
    res.status(202).json({ task_id: d.task_id, from: new Date(b.from).toISOString(), to: new Date(b.to).toISOString(), started: started.map(view), already_run: alreadyRun.map(view) });
  });

  route(r, keys, listTaskRuns, async (req, res) => {
    const t = await mustExist(idOf(req.params.id), principalOf(res));
    const q = parse(listTaskRuns.query, queryObject(req));
    const limit = q.limit ?? LIMITS.pageDefault;
    res.json(runPage(await store.runsOfTask(t.task_id, limit + 1, q.cursor === undefined ? undefined : runCursor(q.cursor)), limit));
  });

  route(r, keys, listTaskResults, async (req, res) => {
    const t = await mustExist(idOf(req.params.id), principalOf(res));
    const q = parse(listTaskResults.query, queryObject(req));
    const rows = await results.resultsOf(t.task_id, q.limit ?? LIMITS.pageDefault);
    res.json({
      results: rows.map((x) => ({
        ...x,
        scheduled_at: x.scheduled_at.toISOString(),
        started_at: x.started_at.toISOString(),
        finished_at: x.finished_at.toISOString(),
        recorded_at: x.recorded_at.toISOString(),
        result: x.result as never,
      })),
    });
  });

  route(r, keys, listRuns, async (req, res) => {
    const q = parse(listRuns.query, queryObject(req));
    const limit = q.limit ?? LIMITS.pageDefault;
    res.json(runPage(await store.listRuns({ status: q.status, taskId: q.task_id, bounds: principalOf(res).bounds, limit: limit + 1, after: q.cursor === undefined ? undefined : runCursor(q.cursor) }), limit));
  });

  route(r, keys, getRun, async (req, res) => {
    const id = parse(getRun.params.shape.id, req.params.id, 'run_id');
    const run = await mustBeOwnRun(id, principalOf(res));
    const [log, deliveries, followUps] = await Promise.all([store.runLog(id), store.deliveries(id), results.followUpsOf(id)]);
    const logged = await tlog.logIndexes(3, id, log.map((l) => Number(l.log_row_id)));
    res.json({
      ...runOf(run),
      log: log.map((l) => ({
        id: Number(l.log_row_id),
        status: l.status,
        attempt: l.attempt,
        reason: l.reason,
        recorded_at: l.recorded_at.toISOString(),
        log_index: logged.get(Number(l.log_row_id)) ?? null,
      })),
      deliveries: deliveries.map((d) => ({ ...d, recorded_at: d.recorded_at.toISOString() })),
      follow_ups: followUps.map((f) => ({ task_id: f.task_id, name: f.name, created_at: f.created_at.toISOString() })),
    });
  });

  route(r, keys, verifyTask, async (req, res) => {
    const t = await mustExist(idOf(req.params.id), principalOf(res));
    const log = await tlog.checkChain(2, t.task_id, witnessTrust);
    res.json({ task_id: t.task_id, ok: log.ok, checked: log.proven + log.pending, log });
  });

  route(r, keys, verifyRun, async (req, res) => {
    const id = parse(verifyRun.params.shape.id, req.params.id, 'run_id');
    await mustBeOwnRun(id, principalOf(res));
    const log = await tlog.checkChain(3, id, witnessTrust);
    res.json({ run_id: id, ok: log.ok, checked: log.proven + log.pending, log });
  });

  route(r, keys, reportRunResult, async (req, res) => {
    const id = parse(reportRunResult.params.shape.id, req.params.id, 'run_id');
    // Parsed before anything is sent: an answer outside the protocol is a 400 and the run keeps waiting.
    const { attempt, ...answer } = parse(reportRunResult.body, jsonBody(req));
    if (principalOf(res).bounds) await mustBeOwnRun(id, principalOf(res));
    res.json(await tasks.reportResult(id, { answer: answer as AgentAnswer, ...(attempt !== undefined ? { attempt } : {}) }));
  });

  route(r, keys, previewSchedule, (req, res) => {
    const q = parse(previewSchedule.query, queryObject(req));
    const from = q.from ? Date.parse(q.from) : Date.now();
    const description = `${describeCron(q.cron, q.dom_dow) ?? `cron "${q.cron}"`} (${q.timezone})`;
    const at = (t: number) => new Date(t).toISOString();
    if (!q.stagger_s) {
      const times = cronFireTimes({ expression: q.cron, timezone: q.timezone, dom_dow: q.dom_dow }, from, previewCount(q.count));
      return void res.json({ fire_times: times.map(at), timezone: q.timezone, description });
    }
    if (!q.task_id) throw DomainError.validation('task_id', 'is required with stagger_s: the offset within the window comes from the task id');
    const offsetS = staggerOffsetS(q.task_id, q.stagger_s);
    const trigger: CronTrigger = { type: 'cron', expression: q.cron, timezone: q.timezone, dom_dow: q.dom_dow, tolerant: true, stagger_s: q.stagger_s, stagger_offset_s: offsetS };
    const times = fireTimes(trigger, undefined, from, previewCount(q.count));
    res.json({
      fire_times: times.map(at),
      cron_times: times.map((t) => at(t - offsetS * 1000)),
      stagger_offset_s: offsetS,
      timezone: q.timezone,
      description: `${description}, staggered by ${formatDuration(offsetS * 1000)} for task ${q.task_id}`,
    });
  });

  route(r, keys, timeNow, (req, res) => {
    const q = parse(timeNow.query, queryObject(req));
    res.json(timeNowOf(Date.now(), q.timezone, q.calendar, q.lang));
  });

  return r;
}
