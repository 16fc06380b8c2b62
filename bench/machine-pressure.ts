// Where a window's time goes (bench part x): each service process's own CPU (API, worker, this bench's load
// generators, PostgreSQL) next to the whole machine's, the kernel's pressure stall figures (/proc/pressure: the
// share of the window in which some task waited for a CPU, for IO or for memory), and the states of the service's
// processes sampled every 100 ms (R running or runnable, D in uninterruptible sleep: a disk, or a lock in the
// kernel). Linux only; elsewhere each reading is left out.
import { readFileSync } from 'node:fs';
import { totalOf, USER_HZ, watchCpu } from './process-cpu.ts';

/** The whole machine's CPU time so far (/proc/stat, jiffies): busy is all but idle and iowait. */
function machineJiffies(): { busy: number; total: number } | null {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: total - f[3]! - f[4]!, total };
  } catch {
    return null;
  }
}

/** Stall time (µs) so far of /proc/pressure/<what>'s "some" and "full" lines; null where PSI is not there. */
function pressure(what: 'cpu' | 'io' | 'memory'): { some: number; full: number } | null {
  try {
    const text = readFileSync(`/proc/pressure/${what}`, 'utf8');
    const total = (kind: string) => Number(new RegExp(`^${kind} .*total=(\\d+)`, 'm').exec(text)?.[1] ?? NaN);
    return { some: total('some'), full: total('full') };
  } catch {
    return null;
  }
}

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

export type MachineReport = {
  /** The service's CPU over the window as a share of the whole machine (0–1); null without /proc. */
  share: number | null;
  lines: string[];
};

/**
 * Starts watching; `report()` stops and returns the figures. `roles` names the processes to follow by pid; the
 * postmaster's children are counted together as PostgreSQL.
 */
export function watchMachine(roles: Record<string, number>, postmaster: number | null, cores: number) {
  const kinds = ['cpu', 'io', 'memory'] as const;
  const pressure0 = Object.fromEntries(kinds.map((k) => [k, pressure(k)]));
  const machine0 = machineJiffies();
  const t0 = performance.now();
  const cpu = watchCpu(roles, postmaster);
  // Per role, how many samples found one of its processes R or D (this process is running whenever it looks).
  const states = new Map<string, { R: number; D: number }>();
  let samples = 0;
  cpu.onSample((found) => {
    samples++;
    for (const { role, pid, stat } of found) {
      if (pid === process.pid) continue;
      const acc = states.get(role) ?? { R: 0, D: 0 };
      if (stat.state === 'R') acc.R++;
      if (stat.state === 'D') acc.D++;
      states.set(role, acc);
    }
  });

  return {
    report(): MachineReport {
      const used = cpu.read();
      cpu.stop();
      const seconds = (performance.now() - t0) / 1000;
      const lines: string[] = [];
      const machine1 = machineJiffies();
      const busy =
        machine0 && machine1
          ? ` (the whole machine: ${fmt(((machine1.busy - machine0.busy) / (machine1.total - machine0.total)) * 100)}% busy)`
          : '';
      if (used) {
        const perRole = [...used.entries()].map(([role, c]) => `${role} ${fmt((c / USER_HZ / seconds) * 100)}%`);
        lines.push(`CPU by process (100% = one core): ${perRole.join(', ')}${busy}`);
      }
      const stalls = kinds.flatMap((k) => {
        const a = pressure0[k];
        const b = pressure(k);
        if (!a || !b) return [];
        const share = (x: number) => fmt((x / 1e6 / seconds) * 100, 1);
        return [`${k} some ${share(b.some - a.some)}% full ${share(b.full - a.full)}%`];
      });
      if (stalls.length) lines.push(`pressure stalls over the window (/proc/pressure): ${stalls.join('; ')}`);
      const st = [...states.entries()].map(
        ([role, s]) => `${role} R ${fmt(s.R / Math.max(1, samples), 2)} D ${fmt(s.D / Math.max(1, samples), 2)}`,
      );
      if (st.length)
        lines.push(`processes running or runnable (R) and in uninterruptible sleep (D), average count per 100 ms sample: ${st.join(', ')}`);
      const share = used ? totalOf(used) / USER_HZ / seconds / cores : null;
      return { share, lines };
    },
  };
}
