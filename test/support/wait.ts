import { sql, type Kysely } from 'kysely';
// Polls `probe` until `ok` holds (background jobs, deliveries, reviews), failing with the last value seen.
export async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean, what = 'the condition', timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Waits until a session is blocked on a lock while running a statement whose text is like `queryLike` (asked through
 * the pool, outside any transaction: within one, pg_stat_activity keeps its first answer).
 */
export async function untilWaitingOnLock(db: Kysely<any>, queryLike: string, what: string): Promise<void> {
  const waiting = async () =>
    Number(
      (
        await sql<{ n: string }>`select count(*) as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and query like ${queryLike}`.execute(db)
      ).rows[0]!.n,
    );
  await until(waiting, (n) => n > 0, what);
}
