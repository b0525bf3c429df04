/**
 * The leaf rule of task history and run log rows (docs/hash-chain.md §10.1) against its golden
 * vectors (test/vectors/tlog-records.json, cross-checked with Python's hashlib when made): the
 * canonical string, record hash and leaf hash of each row, and that any member change moves it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { recordHash, runLogCanonical, taskHistoryCanonical, type RunLogRecord, type TaskHistoryRecord } from '../../lib/tlog/record-leaf';
import { leafHash } from '../../lib/tlog/verify';

interface Vector<R> {
  row: R;
  canonical: string;
  record_hash: string;
  leaf_hash: string;
}
const vectors = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', 'vectors', 'tlog-records.json'), 'utf8')) as {
  task_history: Vector<TaskHistoryRecord>[];
  task_run_log: Vector<RunLogRecord>[];
};

const cases = [
  ...vectors.task_history.map((v) => ['task_history', v, taskHistoryCanonical(v.row)] as const),
  ...vectors.task_run_log.map((v) => ['task_run_log', v, runLogCanonical(v.row)] as const),
];

test.each(cases)('%s row reproduces its canonical string, record hash and leaf hash', (_table, v, canonical) => {
  expect(canonical).toBe(v.canonical);
  expect(recordHash(canonical).toString('hex')).toBe(v.record_hash);
  expect(leafHash(recordHash(canonical)).toString('hex')).toBe(v.leaf_hash);
});

test('every member is covered: changing any one changes the record hash', () => {
  const th = vectors.task_history[1];
  for (const k of Object.keys(th.row) as (keyof TaskHistoryRecord)[]) {
    const changed = { ...th.row, [k]: typeof th.row[k] === 'number' ? (th.row[k] as number) + 1 : typeof th.row[k] === 'boolean' ? !th.row[k] : 'x' };
    expect({ k, h: recordHash(taskHistoryCanonical(changed as TaskHistoryRecord)).toString('hex') }).not.toEqual({ k, h: th.record_hash });
  }
  const rl = vectors.task_run_log[1];
  for (const k of Object.keys(rl.row) as (keyof RunLogRecord)[]) {
    const changed = { ...rl.row, [k]: typeof rl.row[k] === 'number' ? (rl.row[k] as number) + 1 : typeof rl.row[k] === 'boolean' ? !rl.row[k] : 'x' };
    expect({ k, h: recordHash(runLogCanonical(changed as RunLogRecord)).toString('hex') }).not.toEqual({ k, h: rl.record_hash });
  }
});
