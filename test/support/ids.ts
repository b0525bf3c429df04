/** Ids no other test (or earlier run against the same database) uses. */

const stamp = `${process.pid}-${Date.now().toString(36)}`;
let counter = 0;

/** A fresh id for every call: `<prefix>-<pid>-<time>-<n>` (tasks, intents, signals, …). */
export function uid(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter++}`;
}

/** A fresh session id for every call, in the session id's own spelling: `<prefix>_<pid>_<time>_<n>`. */
export function uniqueSessionId(prefix = 's'): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${counter++}`;
}

/** The same id for the same prefix throughout this test process (`<prefix>-<pid>-<start time>`), for fixtures several tests name. */
export function runScopedId(prefix: string): string {
  return `${prefix}-${stamp}`;
}
