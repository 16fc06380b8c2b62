// SQL for segments: the compiled predicate (src/domain/contacts/segment-compiler.ts) applied to the
// organization's contacts, for a count, a sample or a page of ids.
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Db } from '../database.ts';
import { tenant } from '../tenant.ts';
import type { ContactRow } from './contacts.ts';

/** The organization's contacts (as `c`) matching the predicate: the one query every segment operation builds on. */
export function segmentContacts(db: Db, orgId: string, predicate: RawBuilder<SqlBool>) {
  return tenant(db.selectFrom('contacts as c'), orgId, 'c.organization_id').where(predicate);
}

export async function countSegment(db: Db, orgId: string, predicate: RawBuilder<SqlBool>): Promise<number> {
  const row = await segmentContacts(db, orgId, predicate).select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Newest matching contacts first. */
export function sampleSegment(db: Db, orgId: string, predicate: RawBuilder<SqlBool>, limit: number): Promise<ContactRow[]> {
  return segmentContacts(db, orgId, predicate).selectAll('c').orderBy('c.created_at', 'desc').orderBy('c.id', 'desc').limit(limit).execute();
}

/** A page of matching ids in creation order, then id (stable while contacts are not added or deleted). */
export async function segmentIdPage(db: Db, orgId: string, predicate: RawBuilder<SqlBool>, page: { limit: number; offset: number }): Promise<string[]> {
  const rows = await segmentContacts(db, orgId, predicate).select('c.id').orderBy('c.created_at', 'asc').orderBy('c.id', 'asc').limit(page.limit).offset(page.offset).execute();
  return rows.map((r) => r.id);
}
