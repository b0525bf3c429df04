/** Writes test/vectors/tlog-records.json (docs/hash-chain.md §10.1): npx tsx test/support/tlog-record-vectors.ts. Fixed rows, so the file only changes when the rule does. */
import path from 'node:path';
import fs from 'node:fs';
import { recordHash, runLogCanonical, taskHistoryCanonical, type RunLogRecord, type TaskHistoryRecord } from '../../lib/tlog/record-leaf';
import { leafHash } from '../../lib/tlog/verify';
const th: TaskHistoryRecord[] = [
  { id: 41, task_id: 'daily-digest', version: 1, action: 'create', definition: { name: '每日摘要', trigger: { type: 'cron', expression: '0 7 * * *', timezone: 'Asia/Shanghai' }, weight: 0.1 }, enabled: true, deleted: false, reason: null, created_by: 'agent-7', recorded_at: 1767225600123456 },
  { id: 42, task_id: 'daily-digest', version: 2, action: 'pause', definition: { name: '每日摘要', trigger: { type: 'cron', expression: '0 7 * * *', timezone: 'Asia/Shanghai' }, weight: 0.1 }, enabled: false, deleted: false, reason: 'holiday 🙂', created_by: null, recorded_at: 1767225660000001 },
];
const rl: RunLogRecord[] = [
  { id: 900, run_id: 'run/daily-digest/2026-01-01T07:00:00.000Z', task_id: 'daily-digest', status: 'running', reason: null, trigger: 'schedule', nominal_at: 1767250800000000, started_at: 1767250800250000, finished_at: null, lateness_ms: 250, duration_ms: null, attempt: 1, processed: null, error_count: null, summary: null, result: null, needs_attention: false, recorded_at: 1767250800251234 },
  { id: 901, run_id: 'run/daily-digest/2026-01-01T07:00:00.000Z', task_id: 'daily-digest', status: 'success', reason: null, trigger: 'schedule', nominal_at: 1767250800000000, started_at: 1767250800250000, finished_at: 1767250812750000, lateness_ms: 250, duration_ms: 12500, attempt: 1, processed: 12, error_count: 0, summary: '12 mails, 0 errors', result: { status: 'success', summary: '12 mails, 0 errors', processed: 12, errors: 0 }, needs_attention: false, recorded_at: 1767250812751000 },
];
const out = {
  description: 'Leaf data of task history and run log rows (docs/hash-chain.md §10.1): record hash = SHA-256(UTF-8(JCS(members))), timestamps in integer microseconds since the epoch; leaf hash = SHA-256(0x00 ‖ record hash). Made by lib/tlog/record-leaf.ts.',
  task_history: th.map((r) => { const c = taskHistoryCanonical(r); const h = recordHash(c); return { row: r, canonical: c, record_hash: h.toString('hex'), leaf_hash: leafHash(h).toString('hex') }; }),
  task_run_log: rl.map((r) => { const c = runLogCanonical(r); const h = recordHash(c); return { row: r, canonical: c, record_hash: h.toString('hex'), leaf_hash: leafHash(h).toString('hex') }; }),
};
fs.writeFileSync(path.resolve(__dirname, '..', 'vectors', 'tlog-records.json'), JSON.stringify(out, null, 2) + '\n');
