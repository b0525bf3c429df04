/**
 * The durable outbox: hook handlers enqueue (one line appended to a journal, no network),
 * a sender delivers in order per session with retries and backoff.
 *
 * Journal (`<dir>/journal.jsonl`), one JSON record a line:
 *   {"t":"enq","id":7,"item":{…}}   an item to deliver
 *   {"t":"ack","id":7,"outcome":"delivered"|"rejected"}   it is done
 * On start the journal is replayed: every `enq` without an `ack` is pending again, in id order,
 * so a restart resends what was in flight (the idempotency keys make that safe). When most of
 * the journal is acknowledged it is rewritten with only the pending items (write + rename).
 *
 * Bounded: beyond `maxPending` undelivered items a new one is dropped, never an old one (a
 * prefix of a session's events stays a prefix). Drops, rejections and the current backlog are
 * counted in `<dir>/status.json` and logged, so nothing is lost silently. The counters are the
 * folder's, not the process's: the owner carries them on from the status.json it finds (every
 * `openclaw agent --local` run is a process of its own), since `counting_since`.
 *
 * One process owns a folder at a time (`<dir>/owner.lock` holding its pid). A second process
 * using the same folder writes its own `journal-<pid>.jsonl`, and the owner adopts journals of
 * processes that have exited.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { OutboxItem } from './mapping';

export type DeliveryOutcome =
  /** Stored (or already stored): acknowledge. */
  | { kind: 'delivered' }
  /** Timekeeper refused it for good (invalid, archived session, key reused): acknowledge, count, log. */
  | { kind: 'rejected'; reason: string }
  /** Try again later (network, 5xx, 401/403, 429). */
  | { kind: 'retry'; reason: string };

export type Deliver = (item: OutboxItem) => Promise<DeliveryOutcome>;

export interface OutboxLogger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

export interface OutboxOptions {
  dir: string;
  deliver: Deliver;
  maxPending?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  fsync?: boolean;
  logger?: OutboxLogger;
  /** Rewrite the journal once this many acknowledged records have accumulated. */
  compactAfter?: number;
}

export interface OutboxStatus {
  pid: number;
  journal: string;
  pending: number;
  pending_by_session: Record<string, number>;
  /** Totals since `counting_since`, across processes (see the header). */
  enqueued: number;
  delivered: number;
  rejected: number;
  dropped: number;
  retries: number;
  last_error: string | null;
  last_rejection: string | null;
  /** When this folder's counters started (the first status.json). */
  counting_since: string;
  updated_at: string;
}

const COUNTERS = ['enqueued', 'delivered', 'rejected', 'dropped', 'retries'] as const;

interface Entry {
  id: number;
  item: OutboxItem;
  attempts: number;
}

const noop: OutboxLogger = { info() {}, warn() {}, error() {} };

export class Outbox {
  readonly dir: string;
  readonly journalPath: string;
  private readonly deliver: Deliver;
  private readonly maxPending: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly fsyncEach: boolean;
  private readonly log: OutboxLogger;
  private readonly compactAfter: number;
  private readonly ownsFolder: boolean;

  private fd: number;
  private nextId = 1;
  private readonly lanes = new Map<string, Entry[]>();
  private readonly running = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly wakers = new Map<string, () => void>();
  private pendingCount = 0;
  private ackedInJournal = 0;
  private stopped = false;
  private started = false;
  private idleWaiters: (() => void)[] = [];
  private statusTimer: NodeJS.Timeout | undefined;
  private readonly counts = { enqueued: 0, delivered: 0, rejected: 0, dropped: 0, retries: 0 };
  private lastError: string | null = null;
  private lastRejection: string | null = null;
  private countingSince = new Date().toISOString();

  constructor(opts: OutboxOptions) {
    this.dir = opts.dir;
    this.deliver = opts.deliver;
    this.maxPending = opts.maxPending ?? 10000;
    this.retryBaseMs = opts.retryBaseMs ?? 500;
    this.retryMaxMs = opts.retryMaxMs ?? 30000;
    this.fsyncEach = opts.fsync ?? false;
    this.log = opts.logger ?? noop;
    this.compactAfter = opts.compactAfter ?? 1000;
    fs.mkdirSync(this.dir, { recursive: true });
    this.ownsFolder = takeLock(path.join(this.dir, 'owner.lock'));
    this.journalPath = path.join(this.dir, this.ownsFolder ? 'journal.jsonl' : `journal-${process.pid}.jsonl`);
    const adopted = this.ownsFolder ? orphanJournals(this.dir) : [];
    if (this.ownsFolder) this.carryCounters(path.join(this.dir, 'status.json'));
    for (const p of [this.journalPath, ...adopted]) this.replay(p);
    // Rewrite now: folds adopted journals in and drops acknowledged records.
    this.fd = -1;
    this.rewrite();
    for (const p of adopted) fs.rmSync(p, { force: true });
    if (this.pendingCount > 0) this.log.info(`[timekeeper] outbox ${this.journalPath}: ${this.pendingCount} event(s) pending from before the restart`);
    this.writeStatus();
  }

  /** Undelivered items (in the journal, sent on the next start if this process ends first). */
  get pending(): number {
    return this.pendingCount;
  }

  /** True once close() has run. */
  get closed(): boolean {
    return this.stopped;
  }

  /** The last delivery failure, e.g. `USER_INPUT (…) of session …: ECONNREFUSED`. */
  get lastFailure(): string | null {
    return this.lastError;
  }

  /** Starts delivering (pending items from the journal first). */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    for (const s of this.lanes.keys()) this.kick(s);
  }

  /** Adds an item; synchronous and local (one journal line). False when the outbox is full and it was dropped. */
  enqueue(item: OutboxItem): boolean {
    if (this.stopped) {
      this.counts.dropped++;
      this.log.error(`[timekeeper] outbox closed: dropped a ${describe(item)} (dropped so far: ${this.counts.dropped})`);
      this.scheduleStatus();
      return false;
    }
    if (this.pendingCount >= this.maxPending) {
      this.counts.dropped++;
      // One line per power of two, so a long outage does not flood the log but is never silent.
      if ((this.counts.dropped & (this.counts.dropped - 1)) === 0)
        this.log.error(`[timekeeper] outbox full (${this.maxPending} pending): dropped a ${describe(item)}; dropped so far: ${this.counts.dropped} (see ${path.join(this.dir, 'status.json')})`);
      this.scheduleStatus();
      return false;
    }
    const entry: Entry = { id: this.nextId++, item, attempts: 0 };
    this.append({ t: 'enq', id: entry.id, item });
    this.push(entry);
    this.counts.enqueued++;
    this.scheduleStatus();
    if (this.started) this.kick(item.session);
    return true;
  }

  status(): OutboxStatus {
    const by: Record<string, number> = {};
    for (const [s, l] of this.lanes) if (l.length) by[s] = l.length;
    return {
      pid: process.pid,
      journal: this.journalPath,
      pending: this.pendingCount,
      pending_by_session: by,
      ...this.counts,
      last_error: this.lastError,
      last_rejection: this.lastRejection,
      counting_since: this.countingSince,
      updated_at: new Date().toISOString(),
    };
  }

  /** Resolves when nothing is pending, or after `timeoutMs` (false then). Wakes waiting retries now. */
  async flush(timeoutMs: number): Promise<boolean> {
    if (this.pendingCount === 0) return true;
    for (const w of [...this.wakers.values()]) w();
    return new Promise<boolean>((resolve) => {
      const t = setTimeout(() => {
        this.idleWaiters = this.idleWaiters.filter((w) => w !== done);
        if (!this.stopped) this.writeStatus();
        resolve(false);
      }, timeoutMs);
      const done = () => {
        clearTimeout(t);
        resolve(true);
      };
      this.idleWaiters.push(done);
    });
  }

  /** Stops delivering; what is pending stays in the journal for the next start. */
  close(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const w of [...this.wakers.values()]) w();
    if (this.statusTimer) clearTimeout(this.statusTimer);
    this.writeStatus();
    if (this.fd >= 0) fs.closeSync(this.fd);
    this.fd = -1;
    if (this.ownsFolder) releaseLock(path.join(this.dir, 'owner.lock'));
    if (this.pendingCount > 0) this.log.warn(`[timekeeper] outbox closed with ${this.pendingCount} event(s) pending in ${this.journalPath}; they are sent on the next start`);
  }

  // ---- delivery -----------------------------------------------------------------------

  private kick(session: string): void {
    if (this.stopped || this.running.has(session)) return;
    this.running.add(session);
    void this.drain(session).finally(() => {
      this.running.delete(session);
      // An enqueue may have raced with the end of the loop.
      if (!this.stopped && (this.lanes.get(session)?.length ?? 0) > 0) this.kick(session);
    });
  }

  private async drain(session: string): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      const lane = this.lanes.get(session);
      const head = lane?.[0];
      if (!lane || !head) {
        this.lanes.delete(session);
        return;
      }
      let outcome: DeliveryOutcome;
      try {
        outcome = await this.deliver(head.item);
      } catch (err) {
        outcome = { kind: 'retry', reason: err instanceof Error ? err.message : String(err) };
      }
      if (this.stopped) return;
      if (outcome.kind === 'retry') {
        head.attempts++;
        this.counts.retries++;
        this.lastError = `${describe(head.item)}: ${outcome.reason}`;
        const wait = Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** Math.min(head.attempts - 1, 30));
        const jittered = Math.round(wait / 2 + (Math.random() * wait) / 2);
        if (head.attempts === 1 || head.attempts % 10 === 0)
          this.log.warn(`[timekeeper] delivery of ${describe(head.item)} failed (attempt ${head.attempts}): ${outcome.reason}; retrying in ${jittered} ms, ${this.pendingCount} pending`);
        this.scheduleStatus();
        await this.sleep(session, jittered);
        continue;
      }
      if (outcome.kind === 'rejected') {
        this.counts.rejected++;
        this.lastRejection = `${describe(head.item)}: ${outcome.reason}`;
        this.log.error(`[timekeeper] Timekeeper refused ${describe(head.item)}: ${outcome.reason} (rejected so far: ${this.counts.rejected})`);
      } else {
        this.counts.delivered++;
        if (head.attempts > 0) this.log.info(`[timekeeper] delivered ${describe(head.item)} after ${head.attempts} retr${head.attempts === 1 ? 'y' : 'ies'}`);
      }
      lane.shift();
      this.pendingCount--;
      this.append({ t: 'ack', id: head.id, outcome: outcome.kind });
      this.ackedInJournal++;
      if (this.ackedInJournal >= this.compactAfter && this.ackedInJournal > this.pendingCount) this.rewrite();
      this.scheduleStatus();
      if (this.pendingCount === 0) {
        // Written now, not on the debounce timer: a CLI process may exit right after this.
        this.writeStatus();
        const ws = this.idleWaiters;
        this.idleWaiters = [];
        for (const w of ws) w();
      }
    }
  }

  private sleep(session: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.timers.delete(t);
        this.wakers.delete(session);
        resolve();
      };
      const t = setTimeout(done, ms);
      // A retry wait never keeps the process (an OpenClaw CLI run) alive by itself.
      t.unref();
      this.timers.add(t);
      this.wakers.set(session, done);
    });
  }

  // ---- the journal --------------------------------------------------------------------

  private push(e: Entry): void {
    let lane = this.lanes.get(e.item.session);
    if (!lane) this.lanes.set(e.item.session, (lane = []));
    lane.push(e);
    this.pendingCount++;
  }

  private replay(file: string): void {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    const items = new Map<number, OutboxItem>();
    let torn = 0;
    for (const line of text.split('\n')) {
      if (!line) continue;
      let rec: { t?: string; id?: number; item?: OutboxItem };
      try {
        rec = JSON.parse(line);
      } catch {
        torn++; // a line cut by a crash mid-write: its enqueue never returned
        continue;
      }
      if (rec.t === 'enq' && typeof rec.id === 'number' && rec.item) items.set(rec.id, rec.item);
      else if (rec.t === 'ack' && typeof rec.id === 'number') items.delete(rec.id);
    }
    if (torn) this.log.warn(`[timekeeper] outbox ${file}: skipped ${torn} unreadable line(s)`);
    for (const id of [...items.keys()].sort((a, b) => a - b)) this.push({ id: this.nextId++, item: items.get(id)!, attempts: 0 });
  }

  /** Writes the pending items alone to a new journal and renames it over the old one. */
  private rewrite(): void {
    const pending = [...this.lanes.values()].flat().sort((a, b) => a.id - b.id);
    const tmp = `${this.journalPath}.tmp`;
    fs.writeFileSync(tmp, pending.map((e) => JSON.stringify({ t: 'enq', id: e.id, item: e.item }) + '\n').join(''));
    const tfd = fs.openSync(tmp, 'r+');
    fs.fsyncSync(tfd);
    fs.closeSync(tfd);
    if (this.fd >= 0) fs.closeSync(this.fd);
    fs.renameSync(tmp, this.journalPath);
    this.fd = fs.openSync(this.journalPath, 'a');
    this.ackedInJournal = 0;
  }

  private append(rec: unknown): void {
    if (this.fd < 0) return;
    fs.writeSync(this.fd, JSON.stringify(rec) + '\n');
    if (this.fsyncEach) fs.fsyncSync(this.fd);
  }

  /** Continues the totals of the status.json a previous process left (absent or unreadable: from zero). */
  private carryCounters(file: string): void {
    let prev: Partial<Record<string, unknown>>;
    try {
      prev = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch {
      return;
    }
    for (const k of COUNTERS) {
      const v = prev[k];
      if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) this.counts[k] = v;
    }
    if (typeof prev.counting_since === 'string') this.countingSince = prev.counting_since;
    if (typeof prev.last_rejection === 'string') this.lastRejection = prev.last_rejection;
  }

  /** Writes status.json now (synchronous: also from a process 'exit' handler). */
  flushStatus(): void {
    if (this.statusTimer) clearTimeout(this.statusTimer);
    this.statusTimer = undefined;
    this.writeStatus();
  }

  private scheduleStatus(): void {
    if (this.statusTimer || this.stopped) return;
    this.statusTimer = setTimeout(() => {
      this.statusTimer = undefined;
      this.writeStatus();
    }, 200);
    this.statusTimer.unref();
  }

  private writeStatus(): void {
    const file = path.join(this.dir, this.ownsFolder ? 'status.json' : `status-${process.pid}.json`);
    try {
      fs.writeFileSync(`${file}.tmp`, JSON.stringify(this.status(), null, 2) + '\n');
      fs.renameSync(`${file}.tmp`, file);
    } catch (err) {
      this.log.warn(`[timekeeper] could not write ${file}: ${(err as Error).message}`);
    }
  }
}

function describe(item: OutboxItem): string {
  const what = item.op === 'append' ? `${item.body.type} (${item.body.idempotency_key})` : item.op === 'create' ? 'session create' : `session end (${item.body.reason})`;
  return `${what} of session ${item.session}`;
}

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes `<dir>/owner.lock` unless a live process holds it. */
function takeLock(file: string): boolean {
  for (let i = 0; i < 2; i++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(fs.readFileSync(file, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && alive(pid)) return pid === process.pid;
      fs.rmSync(file, { force: true }); // stale: its process is gone
    }
  }
  return false;
}

function releaseLock(file: string): void {
  try {
    if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.rmSync(file);
  } catch {
    /* already gone */
  }
}

/** Journals of other processes that have exited (journal-<pid>.jsonl). */
function orphanJournals(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .map((f) => /^journal-(\d+)\.jsonl$/.exec(f))
    .filter((m): m is RegExpExecArray => !!m && !alive(Number(m[1])))
    .map((m) => path.join(dir, m[0]));
}
