// The chat-app template aggregate: every read and write of chatapp_templates (migration 0053). Tenant-scoped
// through tenant(), except templatesByIds, the provider callback's lookup (a review answer names a template, not
// an organization, as an inbound message names a number).
import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../../database.ts';
import type { ChatAppTemplatesTable, ChatAppTemplateStatus } from '../../tables/templates.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type TemplateRow = Selectable<ChatAppTemplatesTable>;
type NewTemplate = Omit<Insertable<ChatAppTemplatesTable>, 'organization_id' | 'updated_at'>;

/** The new row, or undefined when the sender already has a template of that name and language. */
export function insertTemplate(db: TenantDb, organizationId: string, t: NewTemplate): Promise<TemplateRow | undefined> {
  return db
    .insertInto('chatapp_templates')
    .values({ ...t, organization_id: organizationId, updated_at: new Date() })
    .onConflict((oc) => oc.columns(['organization_id', 'sender_id', 'name', 'language']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export function setProviderTemplateId(db: TenantDb, organizationId: string, id: string, providerTemplateId: string): Promise<unknown> {
  return tenant(db.updateTable('chatapp_templates'), organizationId)
    .set({ provider_template_id: providerTemplateId })
    .where('id', '=', id)
    .execute();
}

export function getTemplate(db: TenantDb, organizationId: string, id: string): Promise<TemplateRow | undefined> {
  return tenant(db.selectFrom('chatapp_templates'), organizationId).selectAll().where('id', '=', id).executeTakeFirst();
}

/** A sender's templates in one status, by name then language. */
export function templatesOfSender(
  db: TenantDb,
  organizationId: string,
  senderId: string,
  status: ChatAppTemplateStatus,
): Promise<TemplateRow[]> {
  return tenant(db.selectFrom('chatapp_templates'), organizationId)
    .selectAll()
    .where('sender_id', '=', senderId)
    .where('status', '=', status)
    .orderBy('name')
    .orderBy('language')
    .execute();
}

/** A registered template withdrawn by the organization. True when it existed. */
export async function deleteTemplate(db: TenantDb, organizationId: string, id: string): Promise<boolean> {
  const res = await tenant(db.deleteFrom('chatapp_templates'), organizationId).where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** System handle: templates by id, whatever their organization (a provider's review callback). */
export function templatesByIds(db: Db, ids: string[]): Promise<Array<Pick<TemplateRow, 'id' | 'organization_id'>>> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('chatapp_templates').select(['id', 'organization_id']).where('id', 'in', ids).execute();
}

/**
 * The review's answer: PENDING → APPROVED or REJECTED (with the reason), APPROVED → PAUSED (with the reason), PAUSED →
 * APPROVED (reinstated); PENDING → PAUSED too, for a pause that overtook its approval. An answer older than the
 * template's last change, or any other move, is ignored: a repeated or overtaken callback changes nothing.
 */
export async function applyReview(
  db: TenantDb,
  organizationId: string,
  a: { id: string; status: 'APPROVED' | 'REJECTED' | 'PAUSED'; reason: string | null; at: Date },
): Promise<boolean> {
  const from: ChatAppTemplateStatus[] =
    a.status === 'PAUSED' ? ['APPROVED', 'PENDING'] : a.status === 'APPROVED' ? ['PENDING', 'PAUSED'] : ['PENDING'];
  const res = await tenant(db.updateTable('chatapp_templates'), organizationId)
    .set((eb) => ({
      status: a.status,
      rejection_reason: a.status === 'APPROVED' ? null : a.reason,
      approved_at: a.status === 'APPROVED' ? eb.fn.coalesce('approved_at', eb.val(a.at)) : eb.ref('approved_at'),
      updated_at: a.at,
    }))
    .where('id', '=', a.id)
    .where('status', 'in', from)
    // Compared with our own clock only once the platform has answered: its first answer is never refused for skew.
    .where((eb) => eb.or([eb('status', '=', 'PENDING'), eb('updated_at', '<=', a.at)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}
