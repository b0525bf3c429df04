/**
 * The typed HTTP client for the whole API, for tests, the bench, the CLI and a browser
 * dashboard. Every request and response type comes from the route contracts (api/routes.ts):
 * `z.input<>` of a route's params, query and body, `z.output<>` of its success responses.
 * Nothing here is a hand-written copy of a request or response.
 *
 *   const tk = new TimekeeperClient({ baseUrl: 'http://127.0.0.1:8000', apiKey });
 *   const r = await tk.call('appendEvent', { params: { id }, body: { type: 'USER_INPUT', content: { input: 'hi' } } });
 *   r.status;          // 201 | 200
 *   r.body.seq;        // an AppendedEvent
 *   await tk.sessions.append(id, { type: 'USER_INPUT', content: 'hi' }); // the same, body only (tk.append too)
 *   await tk.intents.create({ event_id: 'EMAIL-1', domain: 'communication', action: 'send' });
 *   await tk.tasks.pause('daily-digest');              // tk.tasks, tk.runs, tk.schedules: the task routes
 *   await tk.signals.send({ name: 'error_rate', value: 0.07 }); // delay and condition triggers
 *
 * A status the route's contract lists under `responses` resolves (readiness lists 503 too);
 * any other status rejects with a TimekeeperApiError carrying the problem details. `raw()`
 * sends whatever it is given and never throws on a status, for tests of hostile input.
 *
 * Runs anywhere `fetch` does: it imports no Node built-ins and no server code, only the pure
 * contract modules (for each route's method, path and, with `validateResponses`, schemas).
 */
import { Transport, type BodyOf, type CallOptions, type QueryOf, type ResponseBody, type TimekeeperClientOptions } from './transport';

export * from './transport';

export class TimekeeperClient extends Transport {
  /** The same client with some options changed, e.g. `tk.with({ apiKey: undefined })`. */
  with(overrides: Partial<TimekeeperClientOptions>): TimekeeperClient {
    return new TimekeeperClient({ ...this.options, ...overrides });
  }

  // ---- convenience: the common operations, each `call(…)` returning the body ------------------

  async health(): Promise<ResponseBody<'health'>> {
    return (await this.call('health')).body;
  }

  async createSession(body: BodyOf<'createSession'>, opts?: CallOptions): Promise<ResponseBody<'createSession'>> {
    return (await this.call('createSession', { ...opts, body })).body;
  }

  async listSessions(query?: QueryOf<'listSessions'>, opts?: CallOptions): Promise<ResponseBody<'listSessions'>> {
    return (await this.call('listSessions', { ...opts, query })).body;
  }

  async session(id: string, opts?: CallOptions): Promise<ResponseBody<'getSession'>> {
    return (await this.call('getSession', { ...opts, params: { id } })).body;
  }

  /** Appends an event; a retry of a stored one answers it again with `deduplicated: true`. */
  async append(id: string, body: BodyOf<'appendEvent'>, opts?: CallOptions): Promise<ResponseBody<'appendEvent'>> {
    return (await this.call('appendEvent', { ...opts, params: { id }, body })).body;
  }

  async end(id: string, body?: BodyOf<'endSession'>, opts?: CallOptions): Promise<ResponseBody<'endSession'>> {
    return (await this.call('endSession', { ...opts, params: { id }, body })).body;
  }

  async events(id: string, query?: QueryOf<'listEvents'>, opts?: CallOptions): Promise<ResponseBody<'listEvents'>> {
    return (await this.call('listEvents', { ...opts, params: { id }, query })).body;
  }

  async context(id: string, query?: QueryOf<'getContext'>, opts?: CallOptions): Promise<ResponseBody<'getContext'>> {
    return (await this.call('getContext', { ...opts, params: { id }, query })).body;
  }

  async verify(id: string, opts?: CallOptions): Promise<ResponseBody<'verifySession'>> {
    return (await this.call('verifySession', { ...opts, params: { id } })).body;
  }

  async workflow(id: string, opts?: CallOptions): Promise<ResponseBody<'getWorkflow'>> {
    return (await this.call('getWorkflow', { ...opts, params: { id } })).body;
  }

  /**
   * The session routes (/v1/sessions*), namespaced like tk.intents and tk.tasks. The flat
   * methods above (createSession, append, events, …) are the same calls under the names the
   * client first had; both stay.
   */
  readonly sessions = {
    create: (body: BodyOf<'createSession'>, opts?: CallOptions) => this.createSession(body, opts),
    list: (query?: QueryOf<'listSessions'>, opts?: CallOptions) => this.listSessions(query, opts),
    get: (id: string, opts?: CallOptions) => this.session(id, opts),
    append: (id: string, body: BodyOf<'appendEvent'>, opts?: CallOptions) => this.append(id, body, opts),
    end: (id: string, body?: BodyOf<'endSession'>, opts?: CallOptions) => this.end(id, body, opts),
    events: (id: string, query?: QueryOf<'listEvents'>, opts?: CallOptions) => this.events(id, query, opts),
    context: (id: string, query?: QueryOf<'getContext'>, opts?: CallOptions) => this.context(id, query, opts),
    verify: (id: string, opts?: CallOptions) => this.verify(id, opts),
    workflow: (id: string, opts?: CallOptions) => this.workflow(id, opts),
  };

  /** The seed endpoints: parameters in the query string, answers in the `{code, msg, data}` envelope. */
  readonly seed = {
    /** `occurred_at`: when the session began (RFC 3339), SESSION_CREATE's occurred_at. */
    init: async (session_id: string, opts?: CallOptions & { occurred_at?: string }): Promise<ResponseBody<'seedInit'>> => {
      const { occurred_at, ...call } = opts ?? {};
      return (await this.call('seedInit', { ...call, query: { session_id, ...(occurred_at !== undefined ? { occurred_at } : {}) } })).body;
    },
    append: async (query: QueryOf<'seedAppend'>, opts?: CallOptions): Promise<ResponseBody<'seedAppend'>> =>
      (await this.call('seedAppend', { ...opts, query })).body,
    get: async (query: QueryOf<'seedGet'>, opts?: CallOptions): Promise<ResponseBody<'seedGet'>> => (await this.call('seedGet', { ...opts, query })).body,
  };

  /**
   * The OML-compatible intent routes (/api/events*): record an intent before acting, move it
   * on (in-progress, done, blocked, requested again), ask what is pending after a restart.
   * `withIntent` and `recover` in sdk/intents/helpers.ts build on these.
   */
  readonly intents = {
    /** Records an intent (status requested unless given); 409 intent_exists or duplicate_intent reject. */
    create: async (body: BodyOf<'createIntent'>, opts?: CallOptions): Promise<ResponseBody<'createIntent'>> =>
      (await this.call('createIntent', { ...opts, body })).body,
    /** Moves an intent to its next state; an illegal move rejects with 409 invalid_transition (current_status, allowed_next). */
    transition: async (eventId: string, body: BodyOf<'transitionIntent'>, opts?: CallOptions): Promise<ResponseBody<'transitionIntent'>> =>
      (await this.call('transitionIntent', { ...opts, params: { eventId }, body })).body,
    /** Intents still requested or in progress, oldest first. */
    pending: async (query?: QueryOf<'pendingIntents'>, opts?: CallOptions): Promise<ResponseBody<'pendingIntents'>> =>
      (await this.call('pendingIntents', { ...opts, query })).body,
    /** One intent with every transition and its workflow's next timer. */
    get: async (eventId: string, opts?: CallOptions): Promise<ResponseBody<'getIntent'>> =>
      (await this.call('getIntent', { ...opts, params: { eventId } })).body,
    /** Intents newest first, filtered and paged. */
    list: async (query?: QueryOf<'listIntents'>, opts?: CallOptions): Promise<ResponseBody<'listIntents'>> =>
      (await this.call('listIntents', { ...opts, query })).body,
    /** Recomputes an intent's hash chain. */
    verify: async (eventId: string, opts?: CallOptions): Promise<ResponseBody<'verifyIntent'>> =>
      (await this.call('verifyIntent', { ...opts, params: { eventId } })).body,
    /** Counts by current status and by domain. */
    stats: async (opts?: CallOptions): Promise<ResponseBody<'intentStats'>> => (await this.call('intentStats', { ...opts })).body,
  };

  /**
   * The scheduled-task routes (/v1/tasks*): define a task (cron, interval or at trigger, an
   * agent, deliveries), change, pause, resume, delete or trigger it, and read its runs. Each
   * change answers the task as `get` shows it (next fire times, trigger in words, history).
   */
  readonly tasks = {
    /** Creates a task (every default filled in); a used task_id rejects with 409 task_exists, bad input with 400 naming each field. */
    create: async (body: BodyOf<'createTask'>, opts?: CallOptions): Promise<ResponseBody<'createTask'>> => (await this.call('createTask', { ...opts, body })).body,
    /** Tasks ordered by id (deleted ones left out), filtered by status, tag and enabled, paged by `cursor` (the previous page's next_cursor). */
    list: async (query?: QueryOf<'listTasks'>, opts?: CallOptions): Promise<ResponseBody<'listTasks'>> => (await this.call('listTasks', { ...opts, query })).body,
    /** One task with its next fire times, its trigger in words, its change history and its scheduler. */
    get: async (id: string, opts?: CallOptions): Promise<ResponseBody<'getTask'>> => (await this.call('getTask', { ...opts, params: { id } })).body,
    /** Changes any subset of the fields (`null` removes calendar, session_id or alert); the merged definition is validated as a create; a deleted task rejects with 409 task_deleted. */
    update: async (id: string, body: BodyOf<'patchTask'>, opts?: CallOptions): Promise<ResponseBody<'patchTask'>> =>
      (await this.call('patchTask', { ...opts, params: { id }, body })).body,
    /** Deletes a task: it stops firing; it, its history and its runs stay readable (`deleted: true`). */
    delete: async (id: string, opts?: CallOptions): Promise<ResponseBody<'deleteTask'>> => (await this.call('deleteTask', { ...opts, params: { id } })).body,
    /** Pauses a task: fire times while paused are not made up. */
    pause: async (id: string, opts?: CallOptions): Promise<ResponseBody<'pauseTask'>> => (await this.call('pauseTask', { ...opts, params: { id } })).body,
    /** Resumes a paused or auto-disabled task from now on. */
    resume: async (id: string, opts?: CallOptions): Promise<ResponseBody<'resumeTask'>> => (await this.call('resumeTask', { ...opts, params: { id } })).body,
    /** Runs a task now (also when paused) with a run id of its own: `{run_id, url}` (the answer is 202). */
    trigger: async (id: string, opts?: CallOptions): Promise<ResponseBody<'triggerTask'>> => (await this.call('triggerTask', { ...opts, params: { id } })).body,
    /** Runs every fire time in [from, to] once under its scheduled run id: `{started, already_run}` (the answer is 202); over the limit, a future `to` or from ≥ to rejects with 400 naming the field. */
    backfill: async (id: string, body: BodyOf<'backfillTask'>, opts?: CallOptions): Promise<ResponseBody<'backfillTask'>> =>
      (await this.call('backfillTask', { ...opts, params: { id }, body })).body,
    /** A task's runs, newest fire time first. */
    runs: async (id: string, query?: QueryOf<'listTaskRuns'>, opts?: CallOptions): Promise<ResponseBody<'listTaskRuns'>> =>
      (await this.call('listTaskRuns', { ...opts, params: { id }, query })).body,
    /** The rows the task's `table` delivery stored, one per run (the whole answer, summary uncut), newest first. */
    results: async (id: string, query?: QueryOf<'listTaskResults'>, opts?: CallOptions): Promise<ResponseBody<'listTaskResults'>> =>
      (await this.call('listTaskResults', { ...opts, params: { id }, query })).body,
    /** Checks the task's history rows against a checkpoint of the transparency log (`ok: false` names the first changed version). */
    verify: async (id: string, opts?: CallOptions): Promise<ResponseBody<'verifyTask'>> => (await this.call('verifyTask', { ...opts, params: { id } })).body,
  };

  /** Task runs across tasks (/v1/runs*). */
  readonly runs = {
    /** One run with every state it went through and its deliveries; the run id (`run/<task>/<time>`) is percent-encoded for you. */
    get: async (runId: string, opts?: CallOptions): Promise<ResponseBody<'getRun'>> => (await this.call('getRun', { ...opts, params: { id: runId } })).body,
    /** Runs by status and task; `status: 'needs_attention'` is the queue of runs that failed for good. */
    list: async (query?: QueryOf<'listRuns'>, opts?: CallOptions): Promise<ResponseBody<'listRuns'>> => (await this.call('listRuns', { ...opts, query })).body,
    /**
     * Reports an agent's result (the answer protocol object, optionally with `attempt`) for a run
     * that waits for it; the same result again answers the same outcome (`deduplicated: true`).
     * Rejects with 400 naming the field, 404, or 409 run_not_waiting / result_conflict.
     */
    reportResult: async (runId: string, body: BodyOf<'reportRunResult'>, opts?: CallOptions): Promise<ResponseBody<'reportRunResult'>> =>
      (await this.call('reportRunResult', { ...opts, params: { id: runId }, body })).body,
    /** Checks the run's log rows against a checkpoint of the transparency log (`ok: false` names the first changed row id). */
    verify: async (runId: string, opts?: CallOptions): Promise<ResponseBody<'verifyRun'>> => (await this.call('verifyRun', { ...opts, params: { id: runId } })).body,
  };

  /** Named events for delay and condition triggers (/v1/signals). */
  readonly signals = {
    /**
     * Sends a signal: stored (idempotent by `signal_id`), then delivered to every enabled task
     * whose trigger listens to `name`; answers `{signal_id, seq, at, deduplicated, delivered_to}` (202).
     * After a 503 or a lost answer, send it again with the same `signal_id`.
     */
    send: async (body: BodyOf<'sendSignal'>, opts?: CallOptions): Promise<ResponseBody<'sendSignal'>> => (await this.call('sendSignal', { ...opts, body })).body,
    /** Stored signals, newest first (`name`, `source`, `limit`, `cursor`); a bound key sees only those sent by keys within its bounds. */
    list: async (query?: QueryOf<'listSignals'>, opts?: CallOptions): Promise<ResponseBody<'listSignals'>> => (await this.call('listSignals', { ...opts, query })).body,
    /** One stored signal by its id (percent-encoded for you). */
    get: async (signalId: string, opts?: CallOptions): Promise<ResponseBody<'getSignal'>> => (await this.call('getSignal', { ...opts, params: { id: signalId } })).body,
  };

  /** The transparency log (/v1/log/*): its key, latest checkpoint and proofs. */
  readonly log = {
    key: async (opts?: CallOptions): Promise<string> => (await this.call('getLogKey', { ...opts })).body,
    /** The newest checkpoint with its cosignatures so far; `{ witnessed: 'true' }`: the newest that met the witness quorum. */
    checkpoint: async (query?: QueryOf<'getLogCheckpoint'>, opts?: CallOptions): Promise<string> => (await this.call('getLogCheckpoint', { ...opts, query: query ?? {} })).body,
    inclusion: async (query: QueryOf<'getInclusionProof'>, opts?: CallOptions): Promise<ResponseBody<'getInclusionProof'>> =>
      (await this.call('getInclusionProof', { ...opts, query })).body,
    consistency: async (query: QueryOf<'getConsistencyProof'>, opts?: CallOptions): Promise<ResponseBody<'getConsistencyProof'>> =>
      (await this.call('getConsistencyProof', { ...opts, query })).body,
  };

  /** Cron expressions checked before they are saved (/v1/schedules/preview). */
  readonly schedules = {
    /** The UTC fire times of a cron expression in a time zone after `from` (exclusive, default now), under the declared time-zone policy. */
    preview: async (query: QueryOf<'previewSchedule'>, opts?: CallOptions): Promise<ResponseBody<'previewSchedule'>> =>
      (await this.call('previewSchedule', { ...opts, query })).body,
  };

  /** Now in a zone, and whether today is a working day in a named calendar (/v1/time): the time context task runs get. */
  readonly time = {
    now: async (query?: QueryOf<'timeNow'>, opts?: CallOptions): Promise<ResponseBody<'timeNow'>> => (await this.call('timeNow', { ...opts, query })).body,
  };

}
