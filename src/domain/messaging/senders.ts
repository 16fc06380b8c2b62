// Which sender a message goes from: the one named, or the organization's default (its oldest ACTIVE sender).
import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { SenderIdsTable } from '../../db/tables/core.ts';
import { tenant } from '../../db/tenant.ts';
import { ApiError, conflict, notFound } from '../errors.ts';

export type SenderRow = Selectable<SenderIdsTable>;

export async function resolveSender(db: Db, organizationId: string, senderId: string | undefined): Promise<SenderRow> {
  if (senderId) {
    const sender = await tenant(db.selectFrom('sender_ids'), organizationId).selectAll().where('id', '=', senderId).executeTakeFirst();
    if (!sender) throw notFound('Sender ID');
    if (sender.status !== 'ACTIVE') throw conflict('INVALID_STATE', `Sender ID ${senderId} is ${sender.status}, not ACTIVE.`);
    return sender;
  }
  const sender = await tenant(db.selectFrom('sender_ids'), organizationId)
    .selectAll()
    .where('status', '=', 'ACTIVE')
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  if (!sender) throw new ApiError(422, 'UNPROCESSABLE', 'The organization has no ACTIVE sender ID; create one or name `senderId`.');
  return sender;
}
