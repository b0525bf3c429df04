/**
 * CPU by role, for a bench that drives a private rig (`bench/rig-serve.ts --launch`): the rig's
 * API and worker processes, its Temporal dev server and PostgreSQL, and this bench process with
 * its own children (the floors' worker and clients live here, the durable floor's HTTP front is
 * a child). Read before and after a phase, the difference divided by the phase's calls is what
 * one call cost each role, Timekeeper's phases and the floors' alike (the other side idles).
 */
import fs from 'node:fs';
import { cpuMs, descendants } from './procs';

export type CpuGroups = Map<string, number>;

function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

/** The group a rig process belongs to, by its command; undefined for the launcher's own wrappers. */
function rigRole(pid: number, comm: string): string | undefined {
  if (comm.startsWith('temporal')) return 'Temporal';
  if (comm.startsWith('postgres')) return 'PostgreSQL';
  const cmd = cmdline(pid);
  if (/launch\.cjs api|bin\/api\.ts/.test(cmd)) return 'API';
  if (/launch\.cjs worker|bin\/worker\.ts/.test(cmd)) return 'worker';
  return undefined;
}

/** A reader of CPU ms so far per role: the rig under `rigPid` and this bench (with its children). */
export function rigCpuGroups(rigPid: number): () => CpuGroups {
  return () => {
    const out: CpuGroups = new Map();
    const add = (g: string, ms: number) => out.set(g, (out.get(g) ?? 0) + ms);
    for (const p of descendants(rigPid)) {
      const role = rigRole(p.pid, p.comm);
      // A PostgreSQL backend that ended has its time in the postmaster's reaped time.
      if (role) add(role, cpuMs(p.pid, role === 'PostgreSQL'));
    }
    add('bench', cpuMs(process.pid, true));
    for (const p of descendants(process.pid)) if (p.comm === 'node') add('floor HTTP front', cpuMs(p.pid));
    return out;
  };
}

/** "API 1.20, worker 3.40, … total 9.80": ms of CPU per call between two readings. */
export function perCall(before: CpuGroups, after: CpuGroups, calls: number): string {
  let total = 0;
  const parts: string[] = [];
  for (const [g, ms] of after) {
    const d = (ms - (before.get(g) ?? 0)) / Math.max(1, calls);
    total += d;
    parts.push(`${g} ${d.toFixed(2)}`);
  }
  return `${parts.join(', ')}; total ${total.toFixed(2)} ms`;
}
