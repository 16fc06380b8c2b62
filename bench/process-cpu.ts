// CPU time of the service's processes, read from /proc (Linux): bench parts x and l count where the machine's
// time went (the API and worker processes, the PostgreSQL server), not the machine's load, which other work on a
// shared machine also makes.
import { readdirSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { Db } from '../src/db/database.ts';

/**
 * CPU time (jiffies, user + system) used so far by the service: the API and worker processes, this bench process
 * (its load generators) and every process of the PostgreSQL server (the postmaster and its children), read from
 * /proc (Linux). Counting these processes, not the machine, keeps other work on a shared machine out of the figure
 * (though on a busy machine they get less of it). `seen` keeps each process's last reading. Null where /proc is not
 * there.
 */
export function serviceCpu(pids: number[], postmaster: number | null, seen: Map<number, number>): number | null {
  const read = (pid: number) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from 3 (state) on
      return { ppid: Number(f[1]), cpu: Number(f[11]) + Number(f[12]) }; // utime, stime
    } catch {
      return null;
    }
  };
  try {
    const note = (pid: number, cpu: number | undefined) => {
      if (cpu !== undefined) seen.set(pid, cpu);
    };
    for (const pid of pids) note(pid, read(pid)?.cpu);
    if (postmaster !== null) {
      note(postmaster, read(postmaster)?.cpu);
      for (const name of readdirSync('/proc')) {
        if (!/^\d+$/.test(name)) continue;
        const p = read(Number(name));
        if (p && p.ppid === postmaster) note(Number(name), p.cpu);
      }
    }
    // A backend that has exited keeps the time it was last seen with, so the total never goes back.
    let total = 0;
    for (const cpu of seen.values()) total += cpu;
    return total;
  } catch {
    return null;
  }
}

/** Jiffies per second of /proc's CPU times (USER_HZ: 100 on every Linux this bench meets). */
export const USER_HZ = 100;

/** The PostgreSQL server's postmaster: the parent of this connection's backend; null when not on this machine's /proc. */
export async function postmasterOf(db: Db): Promise<number | null> {
  const backend = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db);
  try {
    const stat = readFileSync(`/proc/${backend.rows[0]!.pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null; // not Linux, or the server runs elsewhere: only our own processes are counted
  }
}

/** User + system CPU time of a running process in ms (Linux /proc, in clock ticks of 10 ms); undefined elsewhere. */
export function cpuMsOf(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}
