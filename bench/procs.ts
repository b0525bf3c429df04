/** Processes of a bench's private instance, from /proc (Linux): the tree, memory and CPU time. */
import fs from 'node:fs';

/** RSS in MiB of one pid (from /proc), 0 when it is gone; `anon`: only its private (anonymous) part. */
export function rssMiB(pid: number, anon = false): number {
  try {
    const m = (anon ? /RssAnon:\s+(\d+) kB/ : /VmRSS:\s+(\d+) kB/).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Every descendant of `root` with its command name, from /proc. */
export function descendants(root: number): { pid: number; comm: string }[] {
  const all = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  const parent = new Map<number, number>();
  const comm = new Map<number, string>();
  for (const d of all) {
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      // "pid (comm) state ppid …": comm may hold spaces, so split after the last ')'.
      const close = stat.lastIndexOf(')');
      comm.set(Number(d), stat.slice(stat.indexOf('(') + 1, close));
      parent.set(Number(d), Number(stat.slice(close + 2).split(' ')[1]));
    } catch {
      /* exited meanwhile */
    }
  }
  const out: { pid: number; comm: string }[] = [];
  const walk = (p: number) => {
    for (const [child, pp] of parent) {
      if (pp === p) {
        out.push({ pid: child, comm: comm.get(child) ?? '?' });
        walk(child);
      }
    }
  };
  walk(root);
  return out;
}

/**
 * CPU time (user + system) in ms a pid has used so far, from /proc; 0 when it is gone.
 * `reaped`: also its children's that it has waited for (cutime + cstime).
 */
export function cpuMs(pid: number, reaped = false): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime), then 16 and 17 (cutime, cstime), counted from after the command name.
    return ((Number(f[11]) + Number(f[12]) + (reaped ? Number(f[13]) + Number(f[14]) : 0)) * 1000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/**
 * CPU ms so far of a process tree (a PostgreSQL postmaster and its backends): the root's own,
 * its reaped children's and every live descendant's. A backend that ends between two readings
 * moves from the live sum into the root's reaped time, so a difference of two readings holds it.
 */
export function treeCpuMs(root: number): number {
  return cpuMs(root, true) + descendants(root).reduce((sum, p) => sum + cpuMs(p.pid), 0);
}

/** Proportional set size in MiB of a process tree (shared pages split between the processes sharing them, so a sum counts them once), from /proc/<pid>/smaps_rollup. */
export function treePssMiB(root: number): number {
  let kb = 0;
  for (const pid of [root, ...descendants(root).map((p) => p.pid)]) {
    try {
      kb += Number(/^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      /* exited meanwhile */
    }
  }
  return kb / 1024;
}

/** CPU-ms and memory-MiB readers of a private rig's processes (the worker child, the Temporal dev server, PostgreSQL's tree) and of this process. */
export function rigProcessReaders(pids: { worker?: number; temporal?: number; postgres?: number }, self: string): { label: string; cpuMs: () => number; mib: () => number }[] {
  const r: { label: string; cpuMs: () => number; mib: () => number }[] = [];
  if (pids.worker) r.push({ label: 'worker (child process)', cpuMs: () => cpuMs(pids.worker!), mib: () => rssMiB(pids.worker!) });
  if (pids.temporal) r.push({ label: 'Temporal dev server', cpuMs: () => cpuMs(pids.temporal!), mib: () => rssMiB(pids.temporal!) });
  if (pids.postgres) r.push({ label: 'PostgreSQL (all; MiB: PSS)', cpuMs: () => treeCpuMs(pids.postgres!), mib: () => treePssMiB(pids.postgres!) });
  r.push({ label: self, cpuMs: () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; }, mib: () => process.memoryUsage().rss / 2 ** 20 });
  return r;
}

/** USER_HZ: 100 on every Linux this runs on (sysconf(_SC_CLK_TCK)). */
const CLOCK_TICKS = 100;

/** CPU ms so far per group of processes: this process, and its descendants grouped by command. */
export function cpuByGroup(root: number): Map<string, number> {
  const out = new Map<string, number>([['node (this process)', cpuMs(root)]]);
  for (const p of descendants(root)) {
    const group = p.comm.startsWith('temporal') ? 'temporal' : p.comm.startsWith('postgres') ? 'postgres' : p.comm;
    out.set(group, (out.get(group) ?? 0) + cpuMs(p.pid));
  }
  return out;
}
