// Bots: CRUD, the draft/publish state machine (state.ts), publish validation (flow.ts), revisions and testers.
import { inTransaction } from '../../db/database.ts';
import * as q from '../../db/queries/bots/bots.ts';
import { releaseConversations } from '../../db/queries/bots/sessions.ts';
import { getSender } from '../../db/queries/sender-ids/senders.ts';
import { insertRcsTestDevice } from '../../db/queries/sender-ids/channels.ts';
import type { PageRequest } from '../../db/paging.ts';
import { ApiError, bodyField, conflict, found, invalidField, unknownReference, unprocessable } from '../errors.ts';
import { matchContentRules, type ContentRuleSpec } from '../compliance/content-rules.ts';
import { parsePhone } from '../phone.ts';
import { providerUnsupported } from '../providers.ts';
import type { Services, Tenant } from '../tenant.ts';
import { mediaAssetProblems } from '../assets/media.ts';
import { cardsOf, EMPTY_FLOW, flowWarnings, nodeAssetIds, validateFlow, type BotFlow, type BotValidationError } from './flow.ts';
import { INITIAL_STATUS, sameJson, transition, type BotStatus } from './state.ts';
import { assertInboundTriggers, assertTriggers, type BotInboundTrigger, type BotTrigger } from './triggers.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { BotTesterInviteStatus, Channel } from '../../db/tables/enums.ts';
import type { TenantDb } from '../../db/tenant.ts';

const MAX_TESTERS = 50;
/** Providers' RCS agents: the senders whose testers get a test-device invite. */
const RCS_PROVIDER_SENDER_TYPES = new Set(['RCS_AGENT']);

type Editable = {
  name?: string;
  description?: string | null;
  channel?: Channel;
  senderId?: string | null;
  draftFlow?: BotFlow;
  triggers?: BotTrigger[];
  inboundTriggers?: BotInboundTrigger[];
  defaultForSender?: boolean;
};

/** A default bot greets on its sender: it needs one (400), and a sender has one default bot (409). */
function assertDefault(defaultForSender: boolean | undefined, senderId: string | null | undefined): void {
  if (defaultForSender && !senderId)
    throw invalidField(bodyField('defaultForSender'), 'a default bot needs a senderId: it greets whoever writes to that sender');
}

/** The write, with a second default bot for one sender answered as 409 (the unique index of migration 0043). */
async function oneDefaultPerSender<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (isUniqueViolation(error, q.BOT_DEFAULT_FOR_SENDER_UNIQUE))
      throw conflict('CONFLICT', 'Another bot already is the default bot of this sender; clear its defaultForSender first.');
    throw error;
  }
}

async function assertSender(tx: TenantDb, orgId: string, senderId: string | null | undefined): Promise<void> {
  if (senderId && !(await getSender(tx, orgId, senderId))) throw unknownReference(bodyField('senderId'), 'sender ID');
}

/** Shape checks the document cannot express: unique node/edge ids. */
function assertFlowShape(flow: BotFlow | undefined): void {
  if (!flow) return;
  const ids = new Set<string>();
  flow.nodes.forEach((n, i) => {
    if (ids.has(n.id)) throw invalidField(bodyField('draftFlow', 'nodes', i, 'id'), `duplicate node id "${n.id}"`);
    ids.add(n.id);
  });
  const edges = new Set<string>();
  flow.edges.forEach((e, i) => {
    if (edges.has(e.id)) throw invalidField(bodyField('draftFlow', 'edges', i, 'id'), `duplicate edge id "${e.id}"`);
    edges.add(e.id);
  });
}

export function listBots(tenant: Tenant, page: PageRequest, search?: string) {
  return q.listBots(tenant.db, tenant.organizationId, page, search);
}

export async function getBot(tenant: Tenant, id: string): Promise<q.BotRow> {
  return found(await q.getBot(tenant.db, tenant.organizationId, id), 'Bot');
}

export function createBot(tenant: Tenant, body: Editable & { name: string; channel: Channel }): Promise<q.BotRow> {
  const orgId = tenant.organizationId;
  assertFlowShape(body.draftFlow);
  const triggers = assertTriggers(body.triggers);
  const inboundTriggers = assertInboundTriggers(body.inboundTriggers);
  assertDefault(body.defaultForSender, body.senderId);
  return inTransaction(tenant.db, async (tx) => {
    await assertSender(tx, orgId, body.senderId);
    const draftFlow = body.draftFlow ?? EMPTY_FLOW;
    const row = await oneDefaultPerSender(
      q.insertBot(tx, orgId, {
        name: body.name,
        description: body.description ?? null,
        channel: body.channel,
        senderId: body.senderId ?? null,
        draftFlow,
        triggers: triggers ?? [],
        inboundTriggers: inboundTriggers ?? [],
        defaultForSender: body.defaultForSender ?? false,
      }),
    );
    if (row.status !== INITIAL_STATUS) throw new Error('bot not created DRAFT');
    await q.insertRevision(tx, orgId, row.id, 1, draftFlow);
    return row;
  });
}

export function updateBot(tenant: Tenant, id: string, body: Editable & { expectedVersion?: number }): Promise<q.BotRow> {
  const orgId = tenant.organizationId;
  assertFlowShape(body.draftFlow);
  const triggers = assertTriggers(body.triggers);
  const inboundTriggers = assertInboundTriggers(body.inboundTriggers);
  return inTransaction(tenant.db, async (tx) => {
    const bot = found(await q.getBot(tx, orgId, id, { forUpdate: true }), 'Bot');
    assertDefault(body.defaultForSender ?? bot.default_for_sender, body.senderId !== undefined ? body.senderId : bot.sender_id);
    if (body.expectedVersion !== undefined && body.expectedVersion !== bot.version) {
      throw conflict('CONFLICT', `The bot is at version ${bot.version}, not ${body.expectedVersion}; reload it and retry.`);
    }
    await assertSender(tx, orgId, body.senderId);
    const draftChanged = body.draftFlow !== undefined && !sameJson(body.draftFlow, bot.draft_flow);
    let version: number | undefined;
    let status: BotStatus | undefined;
    if (draftChanged) {
      version = bot.version + 1;
      const matches = bot.published_flow !== null && sameJson(body.draftFlow, bot.published_flow);
      status = transition(bot.status as BotStatus, matches ? 'editMatchingPublished' : 'editDiffering');
      await q.insertRevision(tx, orgId, bot.id, version, body.draftFlow);
    }
    return found(
      await oneDefaultPerSender(
        q.updateBot(tx, orgId, id, {
          name: body.name,
          description: body.description,
          channel: body.channel,
          senderId: body.senderId,
          triggers,
          inboundTriggers,
          defaultForSender: body.defaultForSender,
          ...(draftChanged ? { draftFlow: body.draftFlow, version, status } : {}),
        }),
      ),
      'Bot',
    );
  });
}

export async function deleteBot(tenant: Tenant, id: string): Promise<void> {
  const orgId = tenant.organizationId;
  await inTransaction(tenant.db, async (tx) => {
    found(await q.getBot(tx, orgId, id, { forUpdate: true }), 'Bot');
    if (await q.botIsBlastSource(tx, orgId, id)) {
      throw conflict('CONFLICT', 'The bot is the content source of a scheduled or running blast; cancel the blast first.');
    }
    await releaseConversations(tx, orgId, id);
    await q.deleteBot(tx, orgId, id);
  });
}

/** Whether a flow names the intent (a button's or an edge's). */
function intentIn(flow: BotFlow, value: string): boolean {
  const norm = (x: string | null | undefined) => (x ?? '').trim().toLowerCase();
  return (
    flow.edges.some((e) => norm(e.intent) === value) ||
    flow.nodes.some((n) =>
      [...(n.buttons ?? []), ...(n.content ? cardsOf(n.content).flatMap((k) => k.buttons ?? []) : [])].some(
        (b) => norm(b.intent) === value,
      ),
    )
  );
}

async function findings(tx: TenantDb, orgId: string, bot: q.BotRow): Promise<BotValidationError[]> {
  const [active, all, variables, rules] = await Promise.all([
    q.activeIntentValues(tx, orgId),
    q.allIntentValues(tx, orgId),
    q.variableNames(tx, orgId),
    q.blockingContentRules(tx, orgId),
  ]);
  // Inactive intents stay valid in existing flows (Intent.active): one the published flow already uses may stay.
  const kept = bot.published_flow ? [...all].filter((v) => !active.has(v) && intentIn(bot.published_flow as BotFlow, v)) : [];
  const intents = new Set([...active, ...kept]);
  const specs: ContentRuleSpec[] = rules.map((r) => ({
    id: r.id,
    name: r.name,
    pattern: r.pattern,
    patternType: r.pattern_type as ContentRuleSpec['patternType'],
    action: r.action as ContentRuleSpec['action'],
    caseSensitive: r.case_sensitive,
  }));
  const blocked = (text: string) => matchContentRules(specs, text).map((m) => m.rule.name);
  const flow = bot.draft_flow as BotFlow;
  const assets = await mediaAssetProblems(tx, orgId, flow.nodes.flatMap(nodeAssetIds));
  return validateFlow(flow, bot.channel, intents, variables, blocked, (id) => assets.get(id) ?? null);
}

export async function validateBot(
  tenant: Tenant,
  id: string,
): Promise<{ valid: boolean; version: number; errors: BotValidationError[]; warnings: BotValidationError[] }> {
  const bot = found(await q.getBot(tenant.db, tenant.organizationId, id), 'Bot');
  const errors = await findings(tenant.db, tenant.organizationId, bot);
  return { valid: errors.length === 0, version: bot.version, errors, warnings: flowWarnings(bot.draft_flow as BotFlow) };
}

/** 400 BOT_VALIDATION_FAILED (every finding in `validationErrors`) and nothing changed, or the published bot. */
export function publishBot(tenant: Tenant, id: string, now = new Date()): Promise<q.BotRow> {
  const orgId = tenant.organizationId;
  return inTransaction(tenant.db, async (tx) => {
    const bot = found(await q.getBot(tx, orgId, id, { forUpdate: true }), 'Bot');
    const errors = await findings(tx, orgId, bot);
    if (errors.length > 0) {
      throw new ApiError(400, 'BOT_VALIDATION_FAILED', `The draft flow has ${errors.length} problem(s); nothing was published.`, {
        extra: { validationErrors: errors },
      });
    }
    if (bot.status === 'PUBLISHED' && bot.published_version === bot.version) return bot;
    const status = transition(bot.status as BotStatus, 'publish');
    await q.markRevisionPublished(tx, orgId, bot.id, bot.version, now);
    return found(
      await q.updateBot(tx, orgId, id, { status, publishedFlow: bot.draft_flow, publishedVersion: bot.version, publishedAt: now }),
      'Bot',
    );
  });
}

export async function listRevisions(tenant: Tenant, id: string, page: PageRequest) {
  found(await q.getBot(tenant.db, tenant.organizationId, id), 'Bot');
  return q.listRevisions(tenant.db, tenant.organizationId, id, page);
}

export async function listTesters(tenant: Tenant, id: string): Promise<q.BotTesterRow[]> {
  found(await q.getBot(tenant.db, tenant.organizationId, id), 'Bot');
  return q.testerRows(tenant.db, tenant.organizationId, id);
}

/** Adds a tester by contactId or phone; sends the RCS test-device invite when the bot's sender is an RCS agent. */
export async function addTester(
  tenant: Tenant,
  services: Services,
  id: string,
  body: { contactId?: string; phone?: string; sendRcsInvite?: boolean },
  now = new Date(),
): Promise<q.BotTesterRow & { contactCreated: boolean }> {
  const orgId = tenant.organizationId;
  const parsed = body.phone !== undefined ? parsePhone(body.phone) : undefined;
  if (body.phone !== undefined && !parsed) throw invalidField('body.phone', 'is not a valid phone number for its country', 'INVALID_PHONE');
  return inTransaction(tenant.db, async (tx) => {
    const bot = found(await q.getBot(tx, orgId, id, { forUpdate: true }), 'Bot');
    let contact: { id: string; phone: string; created: boolean };
    if (body.contactId !== undefined) {
      const c = await q.findContact(tx, orgId, { id: body.contactId });
      if (!c) throw unknownReference(bodyField('contactId'), 'contact');
      contact = { ...c, created: false };
    } else {
      contact = await q.ensureContact(tx, orgId, parsed!.e164, parsed!.country ?? null);
    }
    if ((await q.countTesters(tx, orgId, bot.id)) >= MAX_TESTERS)
      throw unprocessable('UNPROCESSABLE', `A bot has at most ${MAX_TESTERS} testers.`);
    if ((await q.testerRows(tx, orgId, bot.id)).some((t) => t.contact_id === contact.id)) {
      throw conflict('ALREADY_EXISTS', 'The contact already is a tester of this bot.');
    }
    const sender = bot.sender_id ? await getSender(tx, orgId, bot.sender_id) : undefined;
    let status: BotTesterInviteStatus = 'NOT_APPLICABLE';
    let sentAt: Date | null = null;
    let error: string | null = null;
    if (sender && RCS_PROVIDER_SENDER_TYPES.has(sender.type)) {
      if (body.sendRcsInvite === false) status = 'NOT_REQUESTED';
      else {
        // A provider without tester invites: 422 PROVIDER_UNSUPPORTED, nothing stored (not a FAILED invite).
        const provider = services.providers.forSender(sender);
        if (!provider.inviteRcsTester) throw providerUnsupported(provider, 'RCS tester invites');
        try {
          const invite = await provider.inviteRcsTester({
            organizationId: orgId,
            senderId: sender.id,
            agentId: sender.address,
            phone: contact.phone,
          });
          status = invite.status === 'ACCEPTED' ? 'ACCEPTED' : invite.status === 'FAILED' ? 'FAILED' : 'PENDING';
          sentAt = now;
          if (status === 'FAILED') error = 'The provider refused the invite: the handset is not RCS capable.';
        } catch (e) {
          status = 'FAILED';
          error = e instanceof Error ? e.message : 'The provider could not be reached.';
        }
        // The handset is the agent's test device too: an agent in TESTING reaches its bot's testers (the sending
        // rule's test devices), and the tester's answer moves both (testers.ts).
        if (sentAt)
          await insertRcsTestDevice(tx, orgId, {
            sender_id: sender.id,
            phone: contact.phone,
            status: status === 'PENDING' ? 'INVITED' : status === 'ACCEPTED' ? 'ACCEPTED' : 'FAILED',
            invited_at: now,
            accepted_at: status === 'ACCEPTED' ? now : null,
          });
      }
    }
    const inserted = await q.insertTester(tx, orgId, { botId: bot.id, contactId: contact.id, phone: contact.phone, status, sentAt, error });
    if (!inserted) throw conflict('ALREADY_EXISTS', 'The contact already is a tester of this bot.');
    const row = (await q.testerRows(tx, orgId, bot.id)).find((t) => t.id === inserted.id)!;
    return { ...row, contactCreated: contact.created };
  });
}
