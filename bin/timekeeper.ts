/**
 * The `timekeeper` command: the jobs people do in a terminal, all through the typed HTTP
 * client (sdk/client.ts) against TIMEKEEPER_URL with TIMEKEEPER_API_KEY (lib/config.ts
 * clientSettings), except `intents repair` and `seal-secrets`, operator commands that talk to Temporal and
 * PostgreSQL as the worker does (ending workflow runs, sealing stored secrets: no API key may do either). `--json` on any command prints machine-readable output; `--help` on any
 * command explains it. Exit codes: 0 ok, 1 a refusal or a broken chain, 2 the server
 * cannot be reached or the input cannot be read.
 */
import fs from 'node:fs';
import { Command, Option } from 'commander';
import { SingleBar, Presets } from 'cli-progress';
import YAML from 'yaml';
import { TimekeeperApiError, TimekeeperClient } from '../sdk/client';
import { Client, Connection } from '@temporalio/client';
import { IntentClient } from '../clients/intents';
import { TaskClient } from '../clients/tasks';
import { clientSettings, loadConfig, taskRunQueues } from '../lib/config';
import { taskSecretsOf } from '../lib/secrets-key';
import { createPool } from '../lib/db';
import { LIMITS } from '../lib/domain/limits';
import { verifyChain, type ChainEvent } from '../lib/hash-chain';
import { TASK_STATUSES, type TaskStatus } from '../lib/domain/tasks';
import { runWitness, type WitnessCliOptions } from './witness';
import { TASK_LIST_ORDERS, type TaskListOrder } from '../lib/domain/list-order';
import { attachProofs, compareWithWitnessed, verifyExportProofs, type LoggedRecord, type ProofSource } from '../lib/tlog/bundle';
import type { TrustPolicy } from '../lib/tlog/proof';
import { noteVerifier } from '../lib/tlog/note';
import { cosignatureVerifier } from '../lib/tlog/cosignature';

class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
}

interface Globals {
  json?: boolean;
  url?: string;
  apiKey?: string;
}

const program = new Command()
  .name('timekeeper')
  .description('Timekeeper from the terminal: sessions, intents, tasks, chain verification, the development stack')
  .option('--json', 'machine-readable JSON output')
  .option('--url <url>', 'API base URL (default $TIMEKEEPER_URL or http://127.0.0.1:8000)')
  .option('--api-key <key>', 'API key (default $TIMEKEEPER_API_KEY)')
  .showHelpAfterError()
  .enablePositionalOptions(false);

function globals(cmd: Command): Globals {
  return cmd.optsWithGlobals() as Globals;
}

function client(cmd: Command): TimekeeperClient {
  const g = globals(cmd);
  const s = clientSettings();
  return new TimekeeperClient({ baseUrl: g.url ?? s.url, apiKey: g.apiKey ?? s.apiKey, timeoutMs: 60_000 });
}

const out = (s: string): void => void process.stdout.write(`${s}\n`);
const printJson = (v: unknown): void => out(JSON.stringify(v, null, 2));
const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? '-' : new Date(ms).toISOString());
const short = (h: string | null | undefined) => (h ? h.slice(0, 12) : '-');

function table(rows: string[][]): void {
  if (rows.length === 0) return;
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  for (const r of rows) out(r.map((c, i) => (i === r.length - 1 ? c : (c ?? '').padEnd(widths[i]))).join('  '));
}

/** Reads a JSON or YAML file (by extension; otherwise tries JSON, then YAML). */
function readDocument(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    if (/\.ya?ml$/i.test(file)) return YAML.parse(text);
    try {
      return JSON.parse(text);
    } catch {
      return YAML.parse(text);
    }
  } catch (err) {
    throw new CliError(`${file} is neither valid JSON nor YAML: ${(err as Error).message}`);
  }
}

/** A task id given directly, or the task_id of a definition file. */
function taskIdOf(arg: string): string {
  if (fs.existsSync(arg) && fs.statSync(arg).isFile()) {
    const doc = readDocument(arg) as { task_id?: unknown };
    if (typeof doc?.task_id !== 'string') throw new CliError(`${arg} has no task_id`);
    return doc.task_id;
  }
  return arg;
}

// ---- development stack -------------------------------------------------------------------

program
  .command('dev')
  .description('start the development stack (what `npm start` does): embedded PostgreSQL and Temporal dev server when not configured, the worker and the API')
  .action(async () => {
    const { run } = await import('./run');
    await run({ worker: true, api: true, embedded: true });
  });

// ---- sessions ----------------------------------------------------------------------------

program
  .command('sessions')
  .description('list sessions, newest first')
  .addOption(new Option('--status <status>', 'only sessions with this status').choices(['open', 'archived']))
  .option('--agent <agent_id>', 'only this agent')
  .option('--channel <channel>', 'only this channel')
  .option('--limit <n>', 'at most this many', '50')
  .option('--oldest', 'oldest first instead')
  .option('--cursor <cursor>', 'the next page (printed under a full page)')
  .action(async (o: { status?: 'open' | 'archived'; agent?: string; channel?: string; limit: string; oldest?: boolean; cursor?: string }, cmd: Command) => {
    // A cursor continues the order it was printed in.
    const order = o.cursor ? undefined : o.oldest ? 'oldest' : 'newest';
    const r = await client(cmd).listSessions({ status: o.status, agent_id: o.agent, channel: o.channel, limit: o.limit, order, cursor: o.cursor });
    if (globals(cmd).json) return printJson(r);
    if (r.sessions.length === 0) return out('no sessions');
    table([
      ['SESSION', 'STATUS', 'AGENT', 'CHANNEL', 'EVENTS', 'CREATED', 'HEAD'],
      ...r.sessions.map((s) => [s.session_id, s.status, s.agent_id ?? '-', s.channel ?? '-', String(s.head?.seq ?? 0), iso(s.created_ts), short(s.head?.hash)]),
    ]);
    if (r.next_cursor) out(`(more: --cursor ${r.next_cursor})`);
  });

/** Every event of a session, page by page. */
async function allEvents(tk: TimekeeperClient, id: string) {
  const events = [];
  let after: number | null = 0;
  while (after !== null) {
    const page = await tk.events(id, { after_seq: after, limit: 1000 });
    events.push(...page.events);
    after = page.next_after_seq;
  }
  return events;
}

program
  .command('timeline')
  .description("show a session's timeline in order")
  .argument('<session_id>')
  .action(async (id: string, _o: unknown, cmd: Command) => {
    const tk = client(cmd);
    const events = await allEvents(tk, id);
    if (globals(cmd).json) return printJson({ session_id: id, events });
    const s = await tk.session(id);
    out(`${s.session_id}  ${s.status}  agent ${s.agent_id ?? '-'}  channel ${s.channel ?? '-'}  ${events.length} events`);
    for (const e of events) {
      const content = JSON.stringify(e.content);
      out(`${String(e.seq).padStart(5)}  ${iso(e.ts)}  ${e.type.padEnd(18)} ${short(e.hash)}  ${content.length > 100 ? `${content.slice(0, 100)}…` : content}`);
    }
  });

program
  .command('verify')
  .description('verify the hash chain of one session, or of all sessions (exit 1 when any chain is broken)')
  .argument('[session_id]', 'the session; omit with --all')
  .option('--all', 'every session (narrowed by --agent, --channel, --status)')
  .option('--agent <agent_id>', 'with --all: only this agent\'s sessions')
  .option('--channel <channel>', 'with --all: only this channel\'s sessions')
  .option('--status <status>', 'with --all: open or archived')
  .action(async (id: string | undefined, o: { all?: boolean; agent?: string; channel?: string; status?: 'open' | 'archived' }, cmd: Command) => {
    const tk = client(cmd);
    const json = globals(cmd).json;
    if (!id && !o.all) throw new CliError('name a session, or use --all');
    const ids: string[] = [];
    if (id) ids.push(id);
    else {
      let cursor: string | undefined;
      do {
        const page = await tk.listSessions({ limit: 200, cursor, agent_id: o.agent, channel: o.channel, status: o.status });
        ids.push(...page.sessions.map((s) => s.session_id));
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
    }
    const bar = !json && process.stderr.isTTY && ids.length > 1 ? new SingleBar({ format: 'verifying [{bar}] {value}/{total} sessions, {broken} broken', stream: process.stderr }, Presets.shades_classic) : undefined;
    bar?.start(ids.length, 0, { broken: 0 });
    const results = [];
    let broken = 0;
    for (const sid of ids) {
      const r = await tk.verify(sid);
      const ok = r.ok && (r.anchor?.ok ?? true);
      if (!ok) broken++;
      results.push(r);
      bar?.increment(1, { broken });
    }
    bar?.stop();
    if (json) printJson({ ok: broken === 0, checked: ids.length, broken, results });
    else {
      for (const r of results) {
        const ok = r.ok && (r.anchor?.ok ?? true);
        const logged = r.log.checkpoint ? `, ${r.log.proven} in log checkpoint ${r.log.checkpoint.tree_size}${r.log.checkpoint.witnessed ? ' (witnessed)' : ''}${r.log.pending ? ` (${r.log.pending} pending)` : ''}` : ', log: no checkpoint yet';
        if (ok) out(`ok      ${r.session_id}  ${r.checked} events, head ${r.head_seq ?? '-'} ${short(r.head_hash)}${logged}`);
        else if (!r.ok) out(`BROKEN  ${r.session_id}  at seq ${r.first_bad_seq}: ${r.reason}: ${r.detail ?? ''}`);
        else out(`BROKEN  ${r.session_id}  the chain head differs from the session workflow's (seq ${r.anchor?.seq} ${short(r.anchor?.hash)})`);
      }
      out(`${ids.length} session${ids.length === 1 ? '' : 's'} checked, ${broken} broken`);
    }
    if (broken > 0) process.exitCode = 1;
  });

program
  .command('export')
  .description('export a session as JSON Lines: one event per line, with seq, prev_hash, hash and, for events the log covers, a tlog_proof against its latest witnessed checkpoint (check it offline with verify-file)')
  .argument('<session_id>')
  .option('-o, --output <file>', 'write to this file instead of stdout')
  .option('--no-proofs', 'leave out the transparency-log proofs')
  .option('--checkpoint <file>', 'prove against this checkpoint note (e.g. one your witnesses cosigned) instead of the log\'s newest witnessed one (its latest while none is witnessed)')
  .action(async (id: string, o: { output?: string; proofs: boolean; checkpoint?: string }, cmd: Command) => {
    let events: Array<Awaited<ReturnType<typeof allEvents>>[number] & { log_index?: number | null; tlog_proof?: string }> = await allEvents(client(cmd), id);
    let note = '';
    if (o.proofs) {
      const source = logProofSource(cmd);
      if (o.checkpoint) {
        const file = o.checkpoint;
        source.checkpoint = () => Promise.resolve(fs.readFileSync(file, 'utf8'));
      }
      const attached = await attachProofs(events, source);
      events = attached.records;
      note = `, ${attached.proven} with log proofs${attached.pending ? ` (${attached.pending} not in a checkpoint yet)` : ''}`;
    }
    const text = events.map((e) => JSON.stringify(e)).join('\n') + (events.length ? '\n' : '');
    if (o.output) {
      fs.writeFileSync(o.output, text);
      process.stderr.write(`${events.length} events of ${id} written to ${o.output}${note}\n`);
    } else process.stdout.write(text);
  });

/** The log's proof routes (GET /v1/log/checkpoint, /v1/log/proof/inclusion) of the server the CLI talks to. */
function logProofSource(cmd: Command): ProofSource {
  const g = globals(cmd);
  const s = clientSettings();
  const base = (g.url ?? s.url).replace(/\/$/, '');
  const apiKey = g.apiKey ?? s.apiKey;
  /** GET path; with `missingOk`, a 404 (the log has no checkpoint yet, or this server keeps no log) is null. */
  const get = async (path: string, missingOk = false): Promise<Response | null> => {
    const res = await fetch(`${base}${path}`, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {}, signal: AbortSignal.timeout(60_000) });
    if (missingOk && res.status === 404) return null;
    if (!res.ok) throw new CliError(`GET ${path}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`, 1);
    return res;
  };
  return {
    // The newest witnessed checkpoint when the log has one (so verify-file --witness-key --quorum
    // needs no --checkpoint), else the newest log-signed one.
    checkpoint: async () => (await (await get('/v1/log/checkpoint?witnessed=true', true))?.text()) ?? (await get('/v1/log/checkpoint', true))?.text() ?? null,
    inclusion: async (leafIndex, treeSize) => {
      const body = (await (await get(`/v1/log/proof/inclusion?leaf_index=${leafIndex}&tree_size=${treeSize}`))!.json()) as { hashes: string[] };
      return body.hashes.map((h) => Buffer.from(h, 'base64'));
    },
  };
}

program
  .command('verify-file')
  .description("verify an export offline, by docs/hash-chain.md's rule (no server needed; exit 1 when the chain is broken)")
  .argument('<file>', 'a JSON Lines export (`timekeeper export`)')
  .option('--head <hash>', 'also require the last event to have this hash (e.g. from a verify at export time)')
  .option('--log-key <key...>', "the log's verifier key (GET /v1/log/key): check each event's tlog_proof against it")
  .option('--witness-key <key...>', 'a witness cosigner key to count cosignatures of')
  .option('--quorum <n>', 'cosignatures required from the --witness-key witnesses (default: all of them)')
  .option('--origin <origin>', "the log's origin (default: any origin the log key signed)")
  .option('--against <witnessed export>', 'an earlier export whose proofs verify under the keys above: every record it proves must be in <file> unchanged')
  .action((file: string, o: { head?: string; logKey?: string[]; witnessKey?: string[]; quorum?: string; origin?: string; against?: string }, cmd: Command) => {
    const events = readExport(file);
    if (events.length === 0) throw new CliError(`${file} holds no events`);
    const sessionId = events[0].session_id;
    const r = verifyChain(sessionId, events);
    const headOk = o.head === undefined || (r.ok && r.head_hash === o.head);
    const log = o.logKey?.length ? verifyExportProofs(events as unknown as LoggedRecord[], trustPolicy(o)) : undefined;
    const hasProofs = events.some((e) => (e as unknown as LoggedRecord).tlog_proof !== undefined);
    if (o.against && !o.logKey?.length) throw new CliError('--against needs --log-key (and --witness-key) to check the witnessed export');
    const against = o.against ? compareWithWitnessed(events as unknown as LoggedRecord[], readExport(o.against) as unknown as LoggedRecord[], trustPolicy(o)) : undefined;
    const ok = r.ok && headOk && r.checked === events.length && (log?.ok ?? true) && (against?.ok ?? true);
    if (globals(cmd).json) printJson({ session_id: sessionId, ...r, ok, ...(o.head !== undefined ? { head_matches: headOk } : {}), ...(log ? { log } : {}), ...(against ? { against } : {}) });
    else if (!r.ok) out(`BROKEN  ${sessionId}  at seq ${r.first_bad_seq}: ${r.reason}: ${r.detail ?? ''}`);
    else if (!headOk) out(`BROKEN  ${sessionId}  the last hash ${short(r.head_hash)} is not the expected ${short(o.head)}`);
    else if (against && !against.ok) out(`BROKEN  ${sessionId}  at seq ${against.first_bad?.seq} (log index ${against.first_bad?.log_index ?? '-'}): ${against.first_bad?.reason}: ${against.first_bad?.detail}`);
    else if (log && !log.ok) out(`BROKEN  ${sessionId}  at seq ${log.first_bad?.seq} (log index ${log.first_bad?.log_index ?? '-'}): not the record the log committed to: ${log.first_bad?.reason}: ${log.first_bad?.detail}`);
    else {
      out(`ok      ${sessionId}  ${r.checked} events, head ${r.head_seq} ${r.head_hash}`);
      if (log?.checkpoint) {
        const c = log.checkpoint;
        out(`log     ${log.proven} events in checkpoint ${c.size} of ${c.origin}, cosigned by ${c.cosigners.map((x) => x.name).join(', ') || 'no witness'}${log.unproven ? `; ${log.unproven} without a proof` : ''}`);
      } else if (log) out(`log     no event carries a proof (${log.unproven} without one)`);
      else if (hasProofs) out('log     proofs present but not checked: pass --log-key (and --witness-key) to check them');
      if (against) out(`against ${against.compared} witnessed events unchanged (${o.against})`);
    }
    if (!ok) process.exitCode = 1;
  });

/** The events of a JSON Lines export, with the API's `type` as the chain rule's `event_type`. */
function readExport(file: string): ChainEvent[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
  }
  const events: ChainEvent[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (!line.trim()) continue;
    let e: Record<string, unknown>;
    try {
      e = JSON.parse(line);
    } catch (err) {
      throw new CliError(`${file}:${i + 1}: not JSON: ${(err as Error).message}`);
    }
    events.push({ ...e, event_type: (e.event_type ?? e.type) as string } as unknown as ChainEvent);
  }
  return events;
}

/** verify-file's trust policy: the log key(s), the witness keys and the quorum. */
function trustPolicy(o: { logKey?: string[]; witnessKey?: string[]; quorum?: string; origin?: string }): TrustPolicy {
  const witnessKeys = o.witnessKey ?? [];
  const quorum = o.quorum === undefined ? witnessKeys.length : Number(o.quorum);
  if (!Number.isInteger(quorum) || quorum < 0 || quorum > witnessKeys.length) throw new CliError(`--quorum must be from 0 to the number of --witness-key (${witnessKeys.length})`);
  try {
    (o.logKey ?? []).forEach(noteVerifier);
    witnessKeys.forEach(cosignatureVerifier);
  } catch (err) {
    throw new CliError(`a --log-key or --witness-key is not a verifier key of its kind: ${(err as Error).message}`);
  }
  return { logKeys: o.logKey ?? [], witnessKeys, quorum, origin: o.origin };
}

// ---- transparency log witness -------------------------------------------------------------

program
  .command('witness')
  .description('run a C2SP tlog-witness: cosign checkpoints of the logs you name after checking their consistency proofs (POST /add-checkpoint)')
  .option('--key-file <file>', 'the witness key (created on first start; default $WITNESS_KEY_FILE or data/witness/witness.key)')
  .option('--state-file <file>', 'the latest cosigned checkpoint per log (default $WITNESS_STATE_FILE or data/witness/state.json)')
  .option('--name <name>', 'the key name for a new key (default $WITNESS_NAME or witness/<hostname>)')
  .option('--log <entry...>', 'a log to witness: "<verifier key>" or "<origin> <verifier key>" (default $WITNESS_LOGS)')
  .option('--listen <host:port>', 'where to listen (default $WITNESS_LISTEN or 127.0.0.1:8010)')
  .option('--prefix <path>', 'URL path prefix before /add-checkpoint (default $WITNESS_PREFIX or none)')
  .option('--print-key', 'print the witness verifier key and exit')
  .action((o: WitnessCliOptions) => runWitness(o));

// ---- intents -----------------------------------------------------------------------------

const intentsCmd = program
  .command('intents')
  .description('list intents, pending (requested, in-progress) first, then the others newest first (intents repair: see its --help)')
  .option('--domain <domain>', 'only this domain')
  .addOption(new Option('--status <status>', 'only this state').choices(['requested', 'in-progress', 'done', 'blocked']))
  .option('--limit <n>', 'at most this many non-pending intents', '50')
  .action(async (o: { domain?: string; status?: 'requested' | 'in-progress' | 'done' | 'blocked'; limit: string }, cmd: Command) => {
    const tk = client(cmd);
    const pending = (await tk.intents.pending(o.domain ? { domain: o.domain } : undefined)).filter((i) => !o.status || i.status === o.status);
    const pendingIds = new Set(pending.map((i) => i.event_id));
    const rest = (await tk.intents.list({ domain: o.domain, status: o.status, limit: o.limit })).events.filter((i) => !pendingIds.has(i.event_id));
    const all = [...pending, ...rest];
    if (globals(cmd).json) return printJson({ pending: pending.length, intents: all });
    out(`${pending.length} pending`);
    if (all.length === 0) return;
    table([['EVENT', 'STATUS', 'DOMAIN', 'ACTION', 'NOTE'], ...all.map((i) => [i.event_id, i.status, i.domain, i.action, i.note ?? ''])]);
  });

intentsCmd
  .command('repair')
  .description(
    'end intent workflow runs stuck in one write for over --stuck-for seconds (the poison pill of versions before the input gate: ' +
      'every PATCH of such an intent timed out), then restart every open intent without a running workflow from its stored head. ' +
      'An operator command: it talks to Temporal and PostgreSQL directly, with the configuration the worker uses ' +
      '(TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TASK_QUEUE, APP_DATABASE_URL or DATABASE_URL)',
  )
  .option('--stuck-for <s>', 'seconds one workflow task must have been open', String(LIMITS.intentWedgedAfterS))
  .action(async (o: { stuckFor: string }, cmd: Command) => {
    const stuckForS = Number(o.stuckFor);
    if (!(stuckForS > 0)) throw new CliError(`--stuck-for must be a positive number of seconds, not ${o.stuckFor}`);
    const config = loadConfig(process.env);
    const connection = await Connection.connect({ address: config.temporalAddress });
    const pool = createPool(config.appDatabaseUrl);
    try {
      const intents = IntentClient.fromConfig(new Client({ connection, namespace: config.temporalNamespace }), pool, config);
      const r = await intents.repairWedged({ stuckForS });
      if (globals(cmd).json) return printJson(r);
      out(`${r.terminated.length} stuck run(s) ended${r.terminated.length ? `: ${r.terminated.join(', ')}` : ''}`);
      out(`${r.restarted.length} open intent(s) restarted from their stored heads${r.restarted.length ? `: ${r.restarted.join(', ')}` : ''}`);
    } finally {
      await pool.end();
      await connection.close();
    }
  });

// ---- tasks -------------------------------------------------------------------------------

program
  .command('tasks')
  .description('list scheduled tasks with their trigger, next run and last status, one page at a time, newest first')
  .addOption(new Option('--status <status>', 'only tasks whose newest run has this status (pending: never ran)').choices([...TASK_STATUSES]))
  .option('--tag <tag>', 'only tasks with this tag')
  .addOption(new Option('--enabled <bool>', 'only enabled (true) or paused (false) tasks').choices(['true', 'false']))
  .option('--limit <n>', 'tasks per page', '50')
  .addOption(new Option('--order <order>', 'newest or oldest by creation time, or id: by task id').choices([...TASK_LIST_ORDERS]).default('newest'))
  .option('--cursor <cursor>', 'the next page (printed under a full page)')
  .option('--all', 'every page, one request per page')
  .action(async (o: { status?: TaskStatus; tag?: string; enabled?: 'true' | 'false'; order: TaskListOrder; limit: string; cursor?: string; all?: boolean }, cmd: Command) => {
    const tk = client(cmd);
    // A cursor continues the order it was printed in.
    const query = { status: o.status, tag: o.tag, enabled: o.enabled, limit: Number(o.limit), order: o.cursor ? undefined : o.order };
    let page = (await tk.call('listTasks', { query: { ...query, cursor: o.cursor } })).body;
    const tasks = [...page.tasks];
    while (o.all && page.next_cursor) {
      page = (await tk.call('listTasks', { query: { ...query, cursor: page.next_cursor } })).body;
      tasks.push(...page.tasks);
    }
    if (globals(cmd).json) return printJson({ tasks, next_cursor: page.next_cursor });
    if (tasks.length === 0) return out('no tasks');
    table([['TASK', 'STATUS', 'NEXT RUN', 'LAST RUN', 'TRIGGER'], ...tasks.map((t) => [t.task_id, t.status, t.next_run ?? '-', t.last_run ? `${t.last_run.status} ${t.last_run.scheduled_at}` : '-', t.trigger_text])]);
    if (page.next_cursor) out(`(more: --cursor ${page.next_cursor}, or --all)`);
  });

const task = program.command('task').description('create, trigger, pause and resume a scheduled task');

task
  .command('create')
  .description('create a task from a JSON or YAML definition file (the scheduler article\'s YAML works as written)')
  .argument('<file>')
  .action(async (file: string, _o: unknown, cmd: Command) => {
    const body = readDocument(file);
    const r = await client(cmd).call('createTask', { body: body as never });
    if (globals(cmd).json) return printJson(r.body);
    out(`created ${r.body.task_id} (${r.body.status}): ${r.body.trigger_text}; next run ${r.body.next_run ?? '-'}`);
    for (const w of r.body.warnings ?? []) out(`warning: ${w.field} ${w.reason}`);
  });

task
  .command('trigger')
  .description('run a task now (also when paused); prints the run id')
  .argument('<task>', 'a task id, or a definition file naming it')
  .action(async (arg: string, _o: unknown, cmd: Command) => {
    const r = await client(cmd).call('triggerTask', { params: { id: taskIdOf(arg) } });
    if (globals(cmd).json) return printJson(r.body);
    out(`started ${r.body.run_id}`);
  });

for (const action of ['pause', 'resume'] as const) {
  task
    .command(action)
    .description(action === 'pause' ? 'pause a task: no fire times run until it is resumed' : 'resume a paused (or auto-disabled) task from now on')
    .argument('<task>', 'a task id, or a definition file naming it')
    .action(async (arg: string, _o: unknown, cmd: Command) => {
      const r = await client(cmd).call(action === 'pause' ? 'pauseTask' : 'resumeTask', { params: { id: taskIdOf(arg) } });
      if (globals(cmd).json) return printJson(r.body);
      out(`${r.body.task_id}: ${r.body.status}${r.body.next_run ? `, next run ${r.body.next_run}` : ''}`);
    });
}

program
  .command('seal-secrets')
  .description(
    'seal the HMAC secrets (webhook agent, deliveries, alert) that tasks stored before sealing existed still hold in clear: ' +
      'each such task gets a new version with the same definition, its secrets sealed under SECRETS_KEY, sent to its scheduler. ' +
      'Older history rows and past workflow histories keep the clear values (append-only): rotate those secrets. ' +
      'An operator command: it talks to Temporal and PostgreSQL directly with the configuration the worker uses ' +
      '(TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TASK_QUEUE, APP_DATABASE_URL or DATABASE_URL, SECRETS_KEY or DATA_DIR)',
  )
  .action(async (_o: unknown, cmd: Command) => {
    const config = loadConfig(process.env);
    const connection = await Connection.connect({ address: config.temporalAddress });
    const pool = createPool(config.appDatabaseUrl);
    try {
      const tasks = new TaskClient({ client: new Client({ connection, namespace: config.temporalNamespace }), pool, taskQueue: config.taskQueue, runQueues: taskRunQueues(config) });
      const sealed = await tasks.sealPlainSecrets(taskSecretsOf(config));
      if (globals(cmd).json) return printJson({ sealed });
      out(`${sealed.length} task(s) had secrets in clear, now sealed${sealed.length ? `: ${sealed.join(', ')}` : ''}`);
    } finally {
      await pool.end();
      await connection.close();
    }
  });

program
  .command('preview')
  .description('the next fire times of a cron expression (5 or 6 fields) in a time zone')
  .argument('<cron>', 'e.g. "0 17 * * 1-5"')
  .option('--tz <zone>', 'IANA time zone', 'UTC')
  .option('--count <n>', 'how many fire times', '10')
  .action(async (cron: string, o: { tz: string; count: string }, cmd: Command) => {
    const r = (await client(cmd).call('previewSchedule', { query: { cron, timezone: o.tz, count: o.count } })).body;
    if (globals(cmd).json) return printJson(r);
    out(r.description);
    const local = new Intl.DateTimeFormat('sv-SE', { timeZone: r.timezone, dateStyle: 'short', timeStyle: 'medium' });
    for (const t of r.fire_times) out(`${t}  (${local.format(new Date(t))} ${r.timezone})`);
  });

// ---- errors ------------------------------------------------------------------------------

function explain(err: unknown): { message: string; code: number } {
  if (err instanceof CliError) return { message: err.message, code: err.exitCode };
  if (err instanceof TimekeeperApiError) {
    const fields = err.errors
      .map((e) => `${e.field}: ${e.reason}`)
      .filter((f) => !err.detail.includes(f))
      .map((f) => `\n  ${f}`)
      .join('');
    return { message: `${err.status} ${err.errorCode}: ${err.detail}${fields}`, code: 1 };
  }
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError') return { message: 'the server did not answer in time', code: 2 };
  if (e instanceof TypeError && /fetch failed/.test(e.message)) {
    const url = globals(program).url ?? clientSettings().url;
    const why = e.cause?.code ?? e.cause?.message ?? 'no answer';
    return { message: `cannot reach Timekeeper at ${url} (${why}). Is it running? Start it with \`timekeeper dev\`, or set TIMEKEEPER_URL.`, code: 2 };
  }
  return { message: e?.message ?? String(err), code: 2 };
}

program.parseAsync(process.argv).catch((err: unknown) => {
  const { message, code } = explain(err);
  if (globals(program).json) process.stderr.write(`${JSON.stringify({ error: message, exit_code: code })}\n`);
  else process.stderr.write(`timekeeper: ${message}\n`);
  process.exit(code);
});
