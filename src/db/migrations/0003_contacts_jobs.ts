// Contacts section: imports, bulk tag jobs, stored uploads, RCS lookups.
import type { Kysely } from 'kysely';

export async function up(_db: Kysely<unknown>): Promise<void> {}

export async function down(_db: Kysely<unknown>): Promise<void> {}
