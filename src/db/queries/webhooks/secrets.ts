// SQL for the start-up maintenance of webhook signing secrets at rest (src/domain/webhooks/signing.ts).
// Deliberately across organizations, like a migration: run on the system handle once by startRuntime after
// migrating, never on a request path.
import { sql } from 'kysely';
import type { Db } from '../../database.ts';

// System handle: start-up maintenance of every organization’s endpoint secrets (see the head of this file).
/** Up to `limit` endpoints after id `after` (in id order) whose secret is still plain (written before migration 0008). */
export function plainSecrets(db: Db, after: string | null, limit: number): Promise<Array<{ id: string; secret: string }>> {
  let query = db.selectFrom('webhook_endpoints').select(['id', 'secret']).where('secret', 'not like', 'v1:%');
  if (after !== null) query = query.where('id', '>', after);
  return query.orderBy('id').limit(limit).execute();
}

// System handle: start-up maintenance of every organization’s endpoint secrets (see the head of this file).
/** Replaces plain secrets by their sealed form, only where the row still holds that plain value; returns how many. */
export async function replacePlainSecrets(db: Db, rows: Array<{ id: string; plain: string; sealed: string }>): Promise<number> {
  if (!rows.length) return 0;
  const result = await sql`
    update webhook_endpoints e set secret = u.sealed
    from unnest(${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.plain)}::text[], ${rows.map((r) => r.sealed)}::text[]) as u(id, plain, sealed)
    where e.id = u.id and e.secret = u.plain`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

// System handle: start-up maintenance of every organization’s endpoint secrets (see the head of this file).
/** The sealed secret of the newest endpoint, to check at start that this process holds the key that sealed it. */
export async function newestSealedSecret(db: Db): Promise<string | undefined> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select('secret')
    .where('secret', 'like', 'v1:%')
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.secret;
}

// System handle: start-up maintenance of every organization’s endpoint secrets (see the head of this file).
/** Once no plain secret is left: VALIDATE the NOT VALID constraint of migration 0008 (a no-op when done). */
export async function validateSealedSecretsConstraint(db: Db): Promise<void> {
  const { rows } = await sql<{ convalidated: boolean }>`
    select convalidated from pg_constraint where conname = 'webhook_endpoints_secret_sealed' and conrelid = 'webhook_endpoints'::regclass`.execute(
    db,
  );
  if (rows[0] && !rows[0].convalidated)
    await sql`alter table webhook_endpoints validate constraint webhook_endpoints_secret_sealed`.execute(db);
}
