// SQL for bots, their revisions and testers (always tenant-scoped).
import { sql, type Selectable } from 'kysely';
import { listPage, type Page } from '../../paging.ts';
import type { BotRevisionsTable, BotsTable, BotTestersTable } from '../../tables/bots.ts';
import { tenant, type TenantDb } from '../../tenant.ts';
import type { BotStatus, BotTesterInviteStatus, Channel } from '../../tables/enums.ts';

/** The partial unique index of 0043: one default bot per sender. */
export const BOT_DEFAULT_FOR_SENDER_UNIQUE = 'bots_default_for_sender_key';

export type BotRow = Selectable<BotsTable>;
export type BotRevisionRow = Selectable<BotRevisionsTable>;
export type BotTesterRow = Selectable<BotTestersTable> & { name: string | null };

const json = (v: unknown) => JSON.stringify(v);

/** Most recently updated first; `search` is a case-insensitive substring of the name. */
export function listBots(db: TenantDb, orgId: string, page: { limit: number; offset: number }, search?: string): Promise<Page<BotRow>> {
  let qb = tenant(db.selectFrom('bots'), orgId).selectAll();
  if (search) qb = qb.where(sql<boolean>`strpos(lower(name), lower(${search})) > 0`);
  return listPage(qb.orderBy('updated_at', 'desc').orderBy('id', 'desc'), page);
}

export function getBot(db: TenantDb, orgId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<BotRow | undefined> {
  const q = tenant(db.selectFrom('bots'), orgId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

export function insertBot(
  db: TenantDb,
  orgId: string,
  b: {
    name: string;
    description: string | null;
    channel: Channel;
    senderId: string | null;
    draftFlow: unknown;
    triggers: unknown[];
    inboundTriggers: unknown[];
    defaultForSender: boolean;
  },
): Promise<BotRow> {
  return db
    .insertInto('bots')
    .values({
      organization_id: orgId,
      name: b.name,
      description: b.description,
      channel: b.channel,
      sender_id: b.senderId,
      draft_flow: json(b.draftFlow),
      triggers: json(b.triggers),
      inbound_triggers: json(b.inboundTriggers),
      default_for_sender: b.defaultForSender,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateBot(
  db: TenantDb,
  orgId: string,
  id: string,
  change: {
    name?: string;
    description?: string | null;
    channel?: Channel;
    senderId?: string | null;
    status?: BotStatus;
    version?: number;
    publishedVersion?: number | null;
    draftFlow?: unknown;
    publishedFlow?: unknown;
    publishedAt?: Date | null;
    triggers?: unknown[];
    inboundTriggers?: unknown[];
    defaultForSender?: boolean;
  },
): Promise<BotRow | undefined> {
  return tenant(db.updateTable('bots'), orgId)
    .set({
      ...(change.name !== undefined ? { name: change.name } : {}),
      ...(change.description !== undefined ? { description: change.description } : {}),
      ...(change.channel !== undefined ? { channel: change.channel } : {}),
      ...(change.senderId !== undefined ? { sender_id: change.senderId } : {}),
      ...(change.status !== undefined ? { status: change.status } : {}),
      ...(change.version !== undefined ? { version: change.version } : {}),
      ...(change.publishedVersion !== undefined ? { published_version: change.publishedVersion } : {}),
      ...(change.draftFlow !== undefined ? { draft_flow: json(change.draftFlow) } : {}),
      ...(change.publishedFlow !== undefined ? { published_flow: json(change.publishedFlow) } : {}),
      ...(change.publishedAt !== undefined ? { published_at: change.publishedAt } : {}),
      ...(change.triggers !== undefined ? { triggers: json(change.triggers) } : {}),
      ...(change.inboundTriggers !== undefined ? { inbound_triggers: json(change.inboundTriggers) } : {}),
      ...(change.defaultForSender !== undefined ? { default_for_sender: change.defaultForSender } : {}),
      updated_at: sql`now()`,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteBot(db: TenantDb, orgId: string, id: string): Promise<boolean> {
  const row = await tenant(db.deleteFrom('bots'), orgId).where('id', '=', id).returning('id').executeTakeFirst();
  return row !== undefined;
}

export async function insertRevision(db: TenantDb, orgId: string, botId: string, version: number, flow: unknown): Promise<void> {
  await db
    .insertInto('bot_revisions')
    .values({ organization_id: orgId, bot_id: botId, version, flow: json(flow) })
    .execute();
}

export async function markRevisionPublished(db: TenantDb, orgId: string, botId: string, version: number, at: Date): Promise<void> {
  await tenant(db.updateTable('bot_revisions'), orgId)
    .set({ published_at: at })
    .where('bot_id', '=', botId)
    .where('version', '=', version)
    .execute();
}

export function listRevisions(
  db: TenantDb,
  orgId: string,
  botId: string,
  page: { limit: number; offset: number },
): Promise<Page<BotRevisionRow>> {
  return listPage(tenant(db.selectFrom('bot_revisions'), orgId).selectAll().where('bot_id', '=', botId).orderBy('version', 'desc'), page);
}

/** Every bot of the organization (flow references, triggers). */
export function allBots(db: TenantDb, orgId: string, opts: { forUpdate?: boolean } = {}): Promise<BotRow[]> {
  const q = tenant(db.selectFrom('bots'), orgId).selectAll().orderBy('id');
  return (opts.forUpdate ? q.forUpdate() : q).execute();
}

export async function activeIntentValues(db: TenantDb, orgId: string): Promise<Set<string>> {
  const rows = await tenant(db.selectFrom('intents'), orgId).select('value').where('active', '=', true).execute();
  return new Set(rows.map((r) => r.value));
}

/** Every intent value of the organization, active or not. */
export async function allIntentValues(db: TenantDb, orgId: string): Promise<Set<string>> {
  const rows = await tenant(db.selectFrom('intents'), orgId).select('value').execute();
  return new Set(rows.map((r) => r.value));
}

export async function variableNames(db: TenantDb, orgId: string): Promise<Set<string>> {
  const rows = await tenant(db.selectFrom('variable_definitions'), orgId).select('name').execute();
  return new Set(rows.map((r) => r.name));
}

export function testerRows(db: TenantDb, orgId: string, botId: string): Promise<BotTesterRow[]> {
  return tenant(db.selectFrom('bot_testers'), orgId)
    .selectAll()
    .select((eb) =>
      eb
        .selectFrom('contacts')
        .select('contacts.name')
        .whereRef('contacts.id', '=', 'bot_testers.contact_id')
        .where('contacts.organization_id', '=', orgId)
        .as('name'),
    )
    .where('bot_id', '=', botId)
    .orderBy('created_at')
    .orderBy('id')
    .execute() as Promise<BotTesterRow[]>;
}

export function findContact(
  db: TenantDb,
  orgId: string,
  by: { id?: string; phone?: string },
): Promise<{ id: string; phone: string } | undefined> {
  let q = tenant(db.selectFrom('contacts'), orgId).select(['id', 'phone']);
  if (by.id !== undefined) q = q.where('id', '=', by.id);
  if (by.phone !== undefined) q = q.where('phone', '=', by.phone);
  return q.executeTakeFirst();
}

/** The contact with this phone, created when missing (never duplicated: the unique phone decides). */
export async function ensureContact(
  db: TenantDb,
  orgId: string,
  phone: string,
  country: string | null,
): Promise<{ id: string; phone: string; created: boolean }> {
  const inserted = await db
    .insertInto('contacts')
    .values({ organization_id: orgId, phone, phone_country: country, name: null, attributes: JSON.stringify({}) })
    .onConflict((oc) => oc.columns(['organization_id', 'phone']).doNothing())
    .returning(['id', 'phone'])
    .executeTakeFirst();
  if (inserted) return { ...inserted, created: true };
  const existing = await findContact(db, orgId, { phone });
  if (!existing) throw new Error('contact vanished');
  return { ...existing, created: false };
}

export async function countTesters(db: TenantDb, orgId: string, botId: string): Promise<number> {
  const r = await tenant(db.selectFrom('bot_testers'), orgId)
    .select(sql<string>`count(*)`.as('n'))
    .where('bot_id', '=', botId)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

/** undefined when the contact already is a tester of the bot. */
export function insertTester(
  db: TenantDb,
  orgId: string,
  t: { botId: string; contactId: string; phone: string; status: BotTesterInviteStatus; sentAt: Date | null; error: string | null },
): Promise<{ id: string } | undefined> {
  return db
    .insertInto('bot_testers')
    .values({
      organization_id: orgId,
      bot_id: t.botId,
      contact_id: t.contactId,
      phone: t.phone,
      rcs_invite_status: t.status,
      rcs_invite_sent_at: t.sentAt,
      rcs_invite_error: t.error,
    })
    .onConflict((oc) => oc.columns(['bot_id', 'contact_id']).doNothing())
    .returning('id')
    .executeTakeFirst();
}

/** A SCHEDULED, SENDING or DISPATCHED blast whose content source is the bot (false while no blasts table exists). */
export async function botIsBlastSource(db: TenantDb, orgId: string, botId: string): Promise<boolean> {
  const exists = await sql<{ t: string | null }>`select to_regclass('blasts')::text as t`.execute(db);
  if (!exists.rows[0]?.t) return false;
  const r = await sql<{ n: number }>`
    select 1 as n from blasts
    where organization_id = ${orgId} and bot_id = ${botId} and status in ('SCHEDULED', 'SENDING', 'DISPATCHED')
    limit 1`.execute(db);
  return r.rows.length > 0;
}

/** The organization's enabled blocking content rules (publish validation: CONTENT_BLOCKED). */
export function blockingContentRules(db: TenantDb, orgId: string) {
  return tenant(db.selectFrom('content_rules'), orgId)
    .select(['id', 'name', 'pattern', 'pattern_type', 'action', 'case_sensitive'])
    .where('enabled', '=', true)
    .where('action', '=', 'block')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
