// Idempotency-Key (Stripe's model, the spec's 24-hour window), scoped to the organization and stored in
// PostgreSQL so every API process shares it.
//
// Applied by the router (src/http/api.ts) to every operation whose document declares the `Idempotency-Key`
// header, around the handler's whole work, in one transaction:
// - a transaction-scoped advisory lock on (organization, key) is tried first: held by a request still running
//   (in any API process) → 409 IDEMPOTENCY_IN_PROGRESS at once, as the document, Stripe and the IETF draft say
//   (the client retries later and then gets the replay);
// - then the key row is inserted; a row already there is the stored answer, replayed with its status and body;
//   the same key with a different body (or for another operation) is 409 IDEMPOTENCY_KEY_REUSED;
// - when the work fails (4xx or 5xx) the transaction rolls back and the key is released, so a corrected retry
//   can succeed; only successful answers are stored and replayed.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { inTransaction, type Db, type Tx } from '../db/database.ts';
import { conflict } from './errors.ts';

const IDEMPOTENCY_WINDOW_HOURS = 24;

export type IdempotentResult<B> = { status: number; body: B; replayed: boolean };

/** Canonical JSON (sorted keys) so that key order in the request does not make a "different body". */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

function requestHash(body: unknown): string {
  return createHash('sha256').update(canonical(body)).digest('hex');
}

export async function withIdempotency<B>(
  db: Db,
  req: { organizationId: string; key: string | undefined; operationId: string; body: unknown },
  work: (tx: Tx) => Promise<{ status: number; body: B }>,
): Promise<IdempotentResult<B>> {
  if (!req.key) return { ...(await inTransaction(db, work)), replayed: false };
  const key = req.key;
  const hash = requestHash(req.body);
  return inTransaction(db, async (tx) => {
    // One round trip: the lock tried, then — only when it is held — the key claimed. A record past the replay window
    // is claimed over (as if deleted first); a live one is left alone and answered below.
    const { rows } = await sql<{ locked: boolean; claimed: boolean }>`
      with l as (select pg_try_advisory_xact_lock(hashtextextended(${req.organizationId} || ':' || ${key}, 0)) as locked),
      c as (
        insert into idempotency_keys as k (organization_id, key, operation_id, request_hash, response_status, response_body)
        select ${req.organizationId}::uuid, ${key}, ${req.operationId}, ${hash}, 0, 'null'::jsonb where (select locked from l)
        on conflict (organization_id, key) do update set
          operation_id = excluded.operation_id, request_hash = excluded.request_hash, response_status = 0,
          response_body = 'null'::jsonb, created_at = now()
        where k.created_at < now() - make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS})
        returning 1
      )
      select (select locked from l) as locked, exists (select 1 from c) as claimed`.execute(tx);
    if (!rows[0]?.locked) {
      throw conflict(
        'IDEMPOTENCY_IN_PROGRESS',
        'A request with this Idempotency-Key is still being processed; retry shortly to get its answer.',
      );
    }
    const claimed = rows[0].claimed;
    if (!claimed) {
      const stored = await tx
        .selectFrom('idempotency_keys')
        .select(['operation_id', 'request_hash', 'response_status', 'response_body'])
        .where('organization_id', '=', req.organizationId)
        .where('key', '=', key)
        .executeTakeFirstOrThrow();
      if (stored.operation_id !== req.operationId || stored.request_hash !== hash) {
        throw conflict('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request body.');
      }
      return { status: stored.response_status, body: stored.response_body as B, replayed: true };
    }
    const result = await work(tx);
    await tx
      .updateTable('idempotency_keys')
      .set({ response_status: result.status, response_body: JSON.stringify(result.body) })
      .where('organization_id', '=', req.organizationId)
      .where('key', '=', key)
      .execute();
    return { ...result, replayed: false };
  });
}

/** Drops records older than the replay window (run periodically). */
export async function purgeExpiredIdempotencyKeys(db: Db): Promise<number> {
  const res = await db
    .deleteFrom('idempotency_keys')
    .where(sql<boolean>`created_at < now() - make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS})`)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
