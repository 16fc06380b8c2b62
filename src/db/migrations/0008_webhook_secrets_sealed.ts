// Webhook signing secrets are stored sealed (AES-256-GCM, `v1:` + base64, src/lib/secrets.ts), never in plain
// text. The key is not available to migrations (it is configuration, and tests migrate without it), so rows
// written before this migration are sealed at start by startRuntime (src/runtime.ts) right after migrating,
// which then validates this constraint. NOT VALID: existing plain rows are tolerated until then, but every row
// inserted or updated from now on must be sealed, so no code path (or a process of an older version during a
// rolling upgrade) can write a plain secret again.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhook_endpoints add constraint webhook_endpoints_secret_sealed check (secret like 'v1:%') not valid`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // The secrets stay sealed: opening them needs the key, which only the application has.
  await sql`alter table webhook_endpoints drop constraint if exists webhook_endpoints_secret_sealed`.execute(db);
}
