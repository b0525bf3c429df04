/** How long a worker takes to replay one session history of N appends (the cost after a restart). */
import fs from 'node:fs';
import { Worker } from '@temporalio/worker';
import { TUNABLE } from '../lib/domain/limits';
import { startFaultRig } from '../test/support/fault-rig';

async function main() {
  const sizes = (process.argv[2] ?? '100,300,1000').split(',').map(Number);
  // One run of each size: the sessions must not continue-as-new before it (SESSION_UPDATES_PER_RUN,
  // default 50, would leave the newest run a few events long).
  const updatesPerRun = Math.min(TUNABLE.updatesPerRun.max, Math.max(...sizes) + 1);
  const rig = await startFaultRig({ config: { updatesPerRun } });
  await rig.startWorker();
  const burst = Number(process.argv[3] ?? '1');
  for (const n of sizes) {
    const id = `replay_${n}_${Date.now()}`;
    await rig.tk.createSession({ session_id: id });
    for (let i = 0; i < n; i += burst) {
      await Promise.all(Array.from({ length: Math.min(burst, n - i) }, (_, j) => rig.tk.append(id, { type: 'USER_INPUT', content: { i: i + j } })));
    }
    const history = await rig.client.workflow.getHandle(`session/${id}`).fetchHistory();
    const copies = 6;
    const t = process.hrtime.bigint();
    const times: number[] = [];
    let last = process.hrtime.bigint();
    for await (const r of Worker.runReplayHistories({ workflowsPath: require.resolve('../workflows') }, Array.from({ length: copies }, (_, k) => ({ workflowId: `${id}-${k}`, history })))) {
      if (r.error) throw r.error;
      const now = process.hrtime.bigint();
      times.push(Number(now - last) / 1e6);
      last = now;
    }
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    console.log(`appends ${n} (bursts of ${burst}): ${history.events?.length} events; replay each ${times.map((x) => x.toFixed(0)).join(', ')} ms (total ${ms.toFixed(0)})`);
  }
  await rig.stop();
  void fs;
}
void main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
