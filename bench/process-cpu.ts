// CPU time of the service's processes, read from /proc (Linux): bench parts x and l count where the machine's
// time went (the API and worker processes, the PostgreSQL server), not the machine's load, which other work on a
// shared machine also makes.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { Db } from '../src/db/database.ts';

type ProcStat = { state: string; ppid: number; cpu: number };

/** A process's state letter, parent and CPU time so far (jiffies, user + system) from /proc; null when gone. */
function procStat(pid: number): ProcStat | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from 3 (state) on
    return { state: f[0]!, ppid: Number(f[1]), cpu: Number(f[11]) + Number(f[12]) };
  } catch {
    return null;
  }
}

/** The postmaster and its children (every backend and background process of the server). */
function postgresPids(postmaster: number | null): number[] {
  if (postmaster === null) return [];
  const out = [postmaster];
  try {
    for (const name of readdirSync('/proc')) if (/^\d+$/.test(name) && procStat(Number(name))?.ppid === postmaster) out.push(Number(name));
  } catch {
    return [];
  }
  return out;
}

export type CpuWatch = {
  /**
   * CPU time (jiffies) each role used since the watch began; PostgreSQL's processes count as 'PostgreSQL'. Null
   * without /proc (not Linux).
   */
  read(): Map<string, number> | null;
  /** Runs `each` on every sample with each process's role, pid and stat (their states, say). */
  onSample(each: (found: Array<{ role: string; pid: number; stat: ProcStat }>) => void): void;
  stop(): void;
};

/**
 * Watches the CPU time of the service's processes from /proc (Linux): `roles` by pid, and every process of the
 * PostgreSQL server under its postmaster. Each process is read every `everyMs` and counted from its first reading
 * (0 for one born while watched) to its last, so a backend that exits keeps what it used; one that lives less
 * than a sample is missed. A before-and-after reading would lose every backend that exits in between: pools
 * close idle connections, and bench part x counted half the machine idle that way while it was busy. Counting
 * these processes, not the machine, keeps other work on a shared machine out of the figure.
 */
export function watchCpu(roles: Record<string, number>, postmaster: number | null, everyMs = 100): CpuWatch {
  const seen = new Map<number, { role: string; first: number; last: number }>();
  const listeners: Array<(found: Array<{ role: string; pid: number; stat: ProcStat }>) => void> = [];
  const sample = (initial: boolean) => {
    const found: Array<[string, number]> = Object.entries(roles);
    for (const pid of postgresPids(postmaster)) found.push(['PostgreSQL', pid]);
    const read: Array<{ role: string; pid: number; stat: ProcStat }> = [];
    for (const [role, pid] of found) {
      const stat = procStat(pid);
      if (!stat) continue;
      const known = seen.get(pid);
      if (known) known.last = stat.cpu;
      else seen.set(pid, { role, first: initial ? stat.cpu : 0, last: stat.cpu });
      read.push({ role, pid, stat });
    }
    if (!initial) for (const each of listeners) each(read);
  };
  sample(true);
  const timer = setInterval(() => sample(false), everyMs);
  timer.unref();
  return {
    read() {
      if (!existsSync('/proc/self/stat')) return null;
      sample(false);
      const out = new Map<string, number>();
      for (const { role, first, last } of seen.values()) out.set(role, (out.get(role) ?? 0) + last - first);
      return out;
    },
    onSample: (each) => void listeners.push(each),
    stop: () => clearInterval(timer),
  };
}

/** The sum of a watch's roles. */
export const totalOf = (used: Map<string, number>) => [...used.values()].reduce((a, b) => a + b, 0);

/** Jiffies per second of /proc's CPU times (USER_HZ: 100 on every Linux this bench meets). */
export const USER_HZ = 100;

/** The PostgreSQL server's postmaster: the parent of this connection's backend; null when not on this machine's /proc. */
export async function postmasterOf(db: Db): Promise<number | null> {
  const backend = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db);
  // Null when not Linux, or the server runs elsewhere: only our own processes are counted.
  return procStat(backend.rows[0]!.pid)?.ppid ?? null;
}

/** User + system CPU time of a running process in ms (Linux /proc, in clock ticks of 10 ms); undefined elsewhere. */
export function cpuMsOf(pid: number): number | undefined {
  const stat = procStat(pid);
  return stat ? (stat.cpu * 1000) / USER_HZ : undefined;
}
