/**
 * HMAC secrets of a task (a webhook agent's, each webhook delivery's and the alert's
 * `secret`) are write-only: sealed with AES-256-GCM (node:crypto) under the operator's key
 * (SECRETS_KEY, or one generated on first start, lib/secrets-key.ts) before the definition is
 * stored, so the database row and every workflow history that carries the definition
 * (scheduler input and signals, run input, activity inputs) hold only ciphertext. The activity
 * that signs a request opens the secret at that moment. Reads show `"secret_set": true`
 * instead. A PATCH that omits a secret keeps the stored one.
 *
 * Sealed form: `sealed:v1:<base64url(iv ‖ tag ‖ ciphertext)>`, with the task id as associated
 * data, so a sealed value moved into another task does not open. Definitions stored before
 * sealing existed carry plain secrets; they are still opened (as they are) and sealed on the
 * task's next change, or at once by `timekeeper tasks seal-secrets` (a new history version with
 * them sealed; the older rows keep the plain values, the history being append-only: rotate them).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { TaskDefinition } from './domain/tasks';

const SEALED = 'sealed:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The places a definition keeps a secret: objects with an optional `secret` string. */
interface Slot {
  secret?: string;
}

/** Each slot that may hold a secret, by a stable name (agent, delivery.<i>, alert). */
function slots(d: TaskDefinition): [string, Slot][] {
  const out: [string, Slot][] = [];
  if (d.agent.type === 'webhook') out.push(['agent', d.agent]);
  d.delivery.forEach((t, i) => t.type === 'webhook' && out.push([`delivery.${i}`, t]));
  if (d.alert) out.push(['alert', d.alert]);
  return out;
}

/** A copy of the definition with each slot's secret changed by `f` (dropped when it returns undefined). */
function mapSecrets(d: TaskDefinition, f: (secret: string | undefined, slot: string) => string | undefined): TaskDefinition {
  const copy = structuredClone(d);
  for (const [name, slot] of slots(copy)) {
    const next = f(slot.secret, name);
    if (next === undefined) delete slot.secret;
    else slot.secret = next;
  }
  return copy;
}

export class TaskSecrets {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error(`the secrets key must be 32 bytes, got ${key.length}`);
  }

  /** A key of its own for one process (tests, tools that never share a database with a worker elsewhere). */
  static ephemeral(): TaskSecrets {
    return new TaskSecrets(randomBytes(32));
  }

  seal(plain: string, taskId: string): string {
    const iv = randomBytes(IV_BYTES);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    c.setAAD(Buffer.from(taskId, 'utf8'));
    const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return SEALED + Buffer.concat([iv, c.getAuthTag(), body]).toString('base64url');
  }

  /** The plain secret; a value stored before sealing existed is returned as it is. Throws when the key does not open it. */
  open(value: string, taskId: string): string {
    if (!value.startsWith(SEALED)) return value;
    const raw = Buffer.from(value.slice(SEALED.length), 'base64url');
    const d = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
    d.setAAD(Buffer.from(taskId, 'utf8'));
    d.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([d.update(raw.subarray(IV_BYTES + TAG_BYTES)), d.final()]).toString('utf8');
    } catch {
      throw new Error('a stored secret does not open with this SECRETS_KEY (the API and the worker must share it)');
    }
  }

  /**
   * The definition to store from a validated request: every secret in it came from the
   * request and is sealed (whatever it looks like); a slot the request left without one keeps
   * the secret `stored` has in the same slot (a PATCH that omits the secret keeps it).
   */
  forStorage(requested: TaskDefinition, stored?: TaskDefinition): TaskDefinition {
    const kept = new Map(stored ? slots(stored).map(([name, s]) => [name, s.secret]) : []);
    return mapSecrets(requested, (secret, name) => (secret !== undefined ? this.seal(secret, requested.task_id) : kept.get(name)));
  }

  /**
   * The definition with each plain secret (stored before sealing existed) sealed, sealed ones
   * kept as they are; undefined when it holds no plain secret (`timekeeper tasks seal-secrets`).
   */
  sealedPlain(d: TaskDefinition): TaskDefinition | undefined {
    if (!slots(d).some(([, s]) => s.secret !== undefined && !s.secret.startsWith(SEALED))) return undefined;
    return mapSecrets(d, (secret) => (secret === undefined || secret.startsWith(SEALED) ? secret : this.seal(secret, d.task_id)));
  }
}

/** The definition without its secrets, as a PATCH merges the request into it (so only the request's own secrets are sealed). */
export const withoutSecrets = (d: TaskDefinition): TaskDefinition => mapSecrets(d, () => undefined);

/** The definition as reads show it: each secret replaced by `"secret_set": true`. */
export function shownDefinition(d: TaskDefinition): Record<string, unknown> {
  const copy = structuredClone(d) as TaskDefinition;
  for (const [, slot] of slots(copy)) {
    if (slot.secret === undefined) continue;
    delete slot.secret;
    (slot as { secret_set?: boolean }).secret_set = true;
  }
  return copy as unknown as Record<string, unknown>;
}
