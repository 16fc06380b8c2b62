// SQL for a sender's protocols (sender_protocols, migration 0012). Tenant-scoped through tenant().
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../database.ts';
import type { SenderProtocolsTable, StoredProtocolConfig } from '../../tables/sender-ids.ts';
import { tenant, type TenantDb } from '../../tenant.ts';
import type { SenderProtocolStatus, SenderProtocolType } from '../../tables/enums.ts';

export type SenderProtocolRow = Selectable<SenderProtocolsTable>;
export type { StoredProtocolConfig };

/** Every protocol row of one sender (DISABLED included), in the document's order SMS, MMS, RCS, CHATAPP. */
export function listSenderProtocols(db: TenantDb, organizationId: string, senderId: string): Promise<SenderProtocolRow[]> {
  return tenant(db.selectFrom('sender_protocols'), organizationId)
    .selectAll()
    .where('sender_id', '=', senderId)
    .orderBy(sql`case type when 'SMS' then 1 when 'MMS' then 2 when 'RCS' then 3 else 4 end`)
    .execute();
}

/** The protocol rows of several senders (for sender answers that embed `protocols`). */
export function listProtocolsOfSenders(db: TenantDb, organizationId: string, senderIds: string[]): Promise<SenderProtocolRow[]> {
  if (senderIds.length === 0) return Promise.resolve([]);
  return tenant(db.selectFrom('sender_protocols'), organizationId)
    .selectAll()
    .where('sender_id', 'in', senderIds)
    .orderBy('created_at')
    .execute();
}

export function getSenderProtocol(
  db: TenantDb,
  organizationId: string,
  senderId: string,
  type: SenderProtocolType,
  opts: { forUpdate?: boolean } = {},
): Promise<SenderProtocolRow | undefined> {
  const q = tenant(db.selectFrom('sender_protocols'), organizationId)
    .selectAll()
    .where('sender_id', '=', senderId)
    .where('type', '=', type);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

/** Inserts the protocol, or turns a DISABLED row of the same type on again with the new config. */
export function upsertSenderProtocol(
  db: TenantDb,
  organizationId: string,
  row: {
    senderId: string;
    type: SenderProtocolType;
    status: SenderProtocolStatus;
    config: StoredProtocolConfig;
    statusReason: string | null;
    now: Date;
  },
): Promise<SenderProtocolRow> {
  return db
    .insertInto('sender_protocols')
    .values({
      organization_id: organizationId,
      sender_id: row.senderId,
      type: row.type,
      status: row.status,
      config: JSON.stringify(row.config),
      status_reason: row.statusReason,
      updated_at: row.now,
    })
    .onConflict((oc) =>
      oc.columns(['organization_id', 'sender_id', 'type']).doUpdateSet({
        status: row.status,
        config: JSON.stringify(row.config),
        status_reason: row.statusReason,
        updated_at: row.now,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateSenderProtocol(
  db: TenantDb,
  organizationId: string,
  senderId: string,
  type: SenderProtocolType,
  set: { status?: SenderProtocolStatus; config?: StoredProtocolConfig; statusReason?: string | null; now: Date },
): Promise<SenderProtocolRow | undefined> {
  return tenant(db.updateTable('sender_protocols'), organizationId)
    .set({
      ...(set.status !== undefined ? { status: set.status } : {}),
      ...(set.config !== undefined ? { config: JSON.stringify(set.config) } : {}),
      ...(set.statusReason !== undefined ? { status_reason: set.statusReason } : {}),
      updated_at: set.now,
    })
    .where('sender_id', '=', senderId)
    .where('type', '=', type)
    .returningAll()
    .executeTakeFirst();
}

/** The sender is not send-ready once none of its protocols is ACTIVE (`SenderId.sendReady`). */
export async function clearSendReadyWithoutActiveProtocol(
  db: TenantDb,
  organizationId: string,
  senderId: string,
  now: Date,
): Promise<void> {
  await tenant(db.updateTable('sender_ids'), organizationId)
    .set({ send_ready: false, updated_at: now })
    .where('id', '=', senderId)
    .where('send_ready', '=', true)
    .where(
      sql<boolean>`not exists (select 1 from sender_protocols p where p.organization_id = sender_ids.organization_id and p.sender_id = sender_ids.id and p.status = 'ACTIVE')`,
    )
    .execute();
}

/** System handle: the protocol rows of the dispatcher's batch of senders, whatever their organizations. */
export function protocolsOfSendersAnyOrganization(
  db: Db,
  senderIds: string[],
): Promise<Array<Pick<SenderProtocolRow, 'sender_id' | 'type' | 'status' | 'config'>>> {
  if (senderIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('sender_protocols').select(['sender_id', 'type', 'status', 'config']).where('sender_id', 'in', senderIds).execute();
}
