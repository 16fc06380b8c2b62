// SQL for the Programs section: programs and their sender attachments. Tenant-scoped through tenant().
import type { Insertable, Selectable, Updateable } from 'kysely';
import { listPage, newestFirst, type Page } from '../../paging.ts';
import type { ProgramSendersTable, ProgramsTable } from '../../tables/submissions.ts';
import { tenant, type TenantDb } from '../../tenant.ts';
import type { ProgramSenderRole, ProgramStatus } from '../../tables/enums.ts';

export type ProgramRow = Selectable<ProgramsTable>;
export type AttachmentRow = Selectable<ProgramSendersTable>;

export function getProgram(
  db: TenantDb,
  organizationId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<ProgramRow | undefined> {
  const q = tenant(db.selectFrom('programs'), organizationId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

/** The program the sender's brand registration created; an ARCHIVED one no longer counts (it released the sender). */
export function programOfSender(db: TenantDb, organizationId: string, senderId: string): Promise<ProgramRow | undefined> {
  return tenant(db.selectFrom('programs'), organizationId)
    .selectAll()
    .where('sender_id', '=', senderId)
    .where('status', '<>', 'ARCHIVED')
    .executeTakeFirst();
}

export function listPrograms(
  db: TenantDb,
  organizationId: string,
  filter: { status?: ProgramStatus | undefined },
  page: { limit: number; offset: number },
): Promise<Page<ProgramRow>> {
  let qb = tenant(db.selectFrom('programs'), organizationId).selectAll();
  if (filter.status) qb = qb.where('status', '=', filter.status);
  return listPage(newestFirst(qb), page);
}

export function insertProgram(
  db: TenantDb,
  organizationId: string,
  row: Omit<Insertable<ProgramsTable>, 'organization_id'>,
): Promise<ProgramRow> {
  return db
    .insertInto('programs')
    .values({ ...row, organization_id: organizationId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateProgram(db: TenantDb, organizationId: string, id: string, patch: Updateable<ProgramsTable>): Promise<ProgramRow> {
  return tenant(db.updateTable('programs'), organizationId)
    .set({ ...patch, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Attachments of some programs, newest first (active and detached: the audit trail). */
export function attachmentsOf(db: TenantDb, organizationId: string, programIds: string[]): Promise<AttachmentRow[]> {
  if (programIds.length === 0) return Promise.resolve([]);
  return tenant(db.selectFrom('program_senders'), organizationId)
    .selectAll()
    .where('program_id', 'in', programIds)
    .orderBy('attached_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** Inserts an active attachment; undefined when the sender already has one to the program (the partial unique index). */
export function insertAttachment(
  db: TenantDb,
  organizationId: string,
  row: { programId: string; senderId: string; role: ProgramSenderRole; at: Date },
): Promise<AttachmentRow | undefined> {
  return db
    .insertInto('program_senders')
    .values({
      organization_id: organizationId,
      program_id: row.programId,
      sender_id: row.senderId,
      role: row.role,
      status: 'ACTIVE',
      attached_at: row.at,
    })
    .onConflict((oc) => oc.columns(['program_id', 'sender_id']).where('status', '=', 'ACTIVE').doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Ends the active attachment of a sender to a program (kept as DETACHED); undefined when there is none. */
export function detachSender(
  db: TenantDb,
  organizationId: string,
  programId: string,
  senderId: string,
  at: Date,
): Promise<AttachmentRow | undefined> {
  return tenant(db.updateTable('program_senders'), organizationId)
    .set({ status: 'DETACHED', detached_at: at })
    .where('program_id', '=', programId)
    .where('sender_id', '=', senderId)
    .where('status', '=', 'ACTIVE')
    .returningAll()
    .executeTakeFirst();
}

/** Active attachments of one sender (any program). */
export function activeAttachmentsOfSender(db: TenantDb, organizationId: string, senderId: string): Promise<AttachmentRow[]> {
  return tenant(db.selectFrom('program_senders'), organizationId)
    .selectAll()
    .where('sender_id', '=', senderId)
    .where('status', '=', 'ACTIVE')
    .execute();
}

/** Ends every active attachment of a program (its archiving): the rows stay, as the audit trail. */
export function detachAllOfProgram(db: TenantDb, organizationId: string, programId: string, at: Date): Promise<AttachmentRow[]> {
  return tenant(db.updateTable('program_senders'), organizationId)
    .set({ status: 'DETACHED', detached_at: at })
    .where('program_id', '=', programId)
    .where('status', '=', 'ACTIVE')
    .returningAll()
    .execute();
}

/** Ends every active attachment of a sender (its deletion): the rows stay, as the audit trail. */
export async function detachSenderFromAllPrograms(db: TenantDb, organizationId: string, senderId: string, at: Date): Promise<number> {
  const rows = await tenant(db.updateTable('program_senders'), organizationId)
    .set({ status: 'DETACHED', detached_at: at })
    .where('sender_id', '=', senderId)
    .where('status', '=', 'ACTIVE')
    .returning('id')
    .execute();
  return rows.length;
}
