// The carrier simulator's fault switch: the share of sends it fails with a transient error, set at run time in a
// running deployment (`npm run admin -- simulator-faults --transient 0.2`, README "Carrier sandbox") and read by the
// simulator in every process. It lives in service_settings, beside the simulator's other state, because the
// processes run on while it changes: an environment variable is read once at start. Not in the public API: it is
// an operator's tool for rehearsing a carrier's bad minutes (the soak, scripts/soak.ts), not a tenant's setting.
import type { Db } from '../db/database.ts';
import { runShared } from '../db/statement-scope.ts';

const SETTING = 'simulator_transient_fault_rate';
/** How long a process trusts the rate it read: a switch reaches every process within a second, at one read per second. */
const TTL_MS = 1000;

const cache = new WeakMap<Db, { until: number; rate: Promise<number> }>();

/** Sets the share (0 to 1) of simulated sends that fail with a transient error; 0 turns the fault off. */
export async function setSimulatorFaults(db: Db, transient: number): Promise<void> {
  if (!(transient >= 0 && transient <= 1)) throw new RangeError('the transient fault rate is a number from 0 to 1');
  await db
    .insertInto('service_settings')
    .values({ key: SETTING, value: String(transient) })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: String(transient) }))
    .execute();
  cache.delete(db);
}

/** The current transient fault rate (0 when never set), cached per pool for TTL_MS. */
export function transientFaultRate(db: Db): Promise<number> {
  const hit = cache.get(db);
  if (hit && hit.until > Date.now()) return hit.rate;
  // Shared by every caller within the TTL (runShared: not cancelled by the first one's client).
  const rate = runShared(() => db.selectFrom('service_settings').select('value').where('key', '=', SETTING).executeTakeFirst()).then(
    (row) => Number(row?.value ?? 0) || 0,
  );
  cache.set(db, { until: Date.now() + TTL_MS, rate });
  rate.catch(() => cache.delete(db));
  return rate;
}
