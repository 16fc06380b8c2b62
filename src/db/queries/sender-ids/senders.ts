// SQL for sender IDs (the Sender IDs section). Tenant-scoped through tenant(); the columns grow with the
// section's migrations (src/db/migrations/0011_* onwards).
import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../../database.ts';
import type { SenderIdsTable } from '../../tables/core.ts';
import { tenant } from '../../tenant.ts';

export type SenderRow = Selectable<SenderIdsTable>;
export type NewSender = Omit<Insertable<SenderIdsTable>, 'organization_id'>;

export function insertSender(db: Db, organizationId: string, sender: NewSender): Promise<SenderRow> {
  return db
    .insertInto('sender_ids')
    .values({ ...sender, organization_id: organizationId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function getSender(db: Db, organizationId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<SenderRow | undefined> {
  const q = tenant(db.selectFrom('sender_ids'), organizationId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}
