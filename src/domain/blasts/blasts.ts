// Blasts section services: create and edit (DRAFT/SCHEDULED), the transitions of the one table
// (transitions.ts), estimate, test sends, progress and stats. Sending itself is in sending.ts.
import type { components } from '../../../generated/api.d.ts';
import * as q from '../../db/queries/blasts/blasts.ts';
import { getBot } from '../../db/queries/bots/bots.ts';
import { ensureContactByPhone } from '../../db/queries/conversations/contacts.ts';
import type { PageRequest } from '../../db/paging.ts';
import { useSavedSegment } from '../contacts/segments.ts';
import { inTenantTransaction, queueOf } from '../messaging/context.ts';

import { send, type MessageType } from '../messaging/send.ts';
import { requireSender } from '../messaging/senders.ts';
import { ApiError, badRequest, bodyField, found, invalidField, unknownReference, type ErrorCode } from '../errors.ts';
import { parsePhone } from '../phone.ts';
import type { Services, Tenant } from '../tenant.ts';
import { emitEvent } from '../webhooks/events.ts';
import {
  assertVariants,
  checkContentAssets,
  checkContentTemplates,
  toSendContent,
  type BlastMessageContent,
  type BlastVariant,
} from './content.ts';
import { assertReady, assertStartable, computeEstimate, contentsOf, type BlastEstimate } from './estimate.ts';
import type { SendContent } from '../messaging/render.ts';
import { toProgress } from './mappers.ts';
import { moveTo, queueScheduledStart, startSending, withdrawUnsent } from './sending.ts';
import { assertTransition, type BlastStatus } from './transitions.ts';

type S = components['schemas'];
export type BlastRow = q.BlastRow;

/** Test recipients per request (documented on testBlast). */
const MAX_TEST_RECIPIENTS = 10;
/** How far ahead a blast may be scheduled (documented on scheduleBlast and updateBlast). */
const MAX_SCHEDULE_DAYS = 90;
const DAY_MS = 24 * 3600_000;
const TEST_REJECTIONS: ReadonlySet<string> = new Set([
  'DNC_LISTED',
  'OPTED_OUT',
  'NO_CONSENT',
  'NO_CHANNEL_AVAILABLE',
  'CHATAPP_SESSION_CLOSED',
]);

type ContentFields = { botId?: string; contentJson?: BlastMessageContent; variants?: BlastVariant[] };
/** The request bodies (the generated types of a schema with oneOf/anyOf are not usable as such). */
export type CreateBody = ContentFields & {
  name: string;
  senderId: string;
  messageType?: MessageType;
  fallbackToSms?: boolean;
  trackLinks?: boolean;
  scheduledAt?: string;
  segmentId?: string;
  contactIds?: string[];
};
export type AudienceBody = { segmentId?: string; contactIds?: string[] };
export type TestBody = { phones?: string[]; contactIds?: string[]; variantKey?: string };

function contentColumns(body: ContentFields) {
  const sources = [body.botId, body.contentJson, body.variants].filter((v) => v !== undefined).length;
  if (sources !== 1)
    throw badRequest('Exactly one content source is needed: botId, contentJson or variants.', [
      { field: 'body', message: 'exactly one of botId, contentJson, variants' },
    ]);
  assertVariants(body.variants);
  return {
    content_source: body.botId ? ('bot' as const) : body.contentJson ? ('content' as const) : ('variants' as const),
    // The bot must exist now (checkReferences); its published flow is read when the blast is estimated and sends.
    bot_id: body.botId ?? null,
    content_json: body.contentJson ? JSON.stringify(body.contentJson) : null,
    variants: body.variants ? JSON.stringify(body.variants) : null,
  };
}

/** Every unknown id of the request at once: 404 naming each field; nothing is written. */
async function checkReferences(
  tenant: Tenant,
  refs: { senderId?: string; botId?: string; segmentId?: string; contactIds?: string[] },
): Promise<void> {
  const unknown: string[] = [];
  const what = new Set<string>();
  if (refs.botId !== undefined && !(await getBot(tenant.db, tenant.organizationId, refs.botId))) {
    unknown.push(bodyField('botId'));
    what.add('bot');
  }
  if (refs.senderId !== undefined) {
    try {
      await requireSender(tenant.db, tenant.organizationId, refs.senderId, bodyField('senderId'));
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 404) throw e;
      unknown.push(bodyField('senderId'));
      what.add('sender ID');
    }
  }
  if (refs.segmentId !== undefined && !(await useSavedSegment(tenant, refs.segmentId))) {
    unknown.push(bodyField('segmentId'));
    what.add('segment');
  }
  if (refs.contactIds?.length) {
    const existing = await q.existingContactIds(tenant.db, tenant.organizationId, refs.contactIds);
    refs.contactIds.forEach((id, i) => {
      if (!existing.has(id)) {
        unknown.push(bodyField('contactIds', i));
        what.add('contact');
      }
    });
  }
  if (unknown.length) throw unknownReference(unknown, what.size === 1 ? [...what][0]! : 'referenced resource');
}

function assertScheduleTime(value: string | null | undefined, field: string, now = new Date()): Date {
  if (!value) throw invalidField(field, 'must be a time in the future');
  const at = new Date(value);
  if (!(at.getTime() > now.getTime())) throw invalidField(field, 'must be in the future');
  if (at.getTime() > now.getTime() + MAX_SCHEDULE_DAYS * DAY_MS)
    throw invalidField(field, `must be at most ${MAX_SCHEDULE_DAYS} days ahead`);
  return at;
}

export async function createBlast(tenant: Tenant, services: Services, body: CreateBody): Promise<BlastRow> {
  const content = contentColumns(body);
  if (!body.segmentId && !body.contactIds?.length)
    throw badRequest('The audience needs segmentId and/or contactIds.', [
      { field: 'body', message: 'segmentId or contactIds is required' },
    ]);
  return inTenantTransaction(tenant, async (t) => {
    await checkReferences(t, { senderId: body.senderId, botId: body.botId, segmentId: body.segmentId, contactIds: body.contactIds });
    await checkContentAssets(t, body);
    await checkContentTemplates(t, body, body.senderId);
    const row = await q.insertBlast(t.db, t.organizationId, {
      name: body.name,
      status: 'DRAFT',
      message_type: body.messageType ?? 'MARKETING',
      sender_id: body.senderId,
      fallback_to_sms: body.fallbackToSms ?? true,
      track_links: body.trackLinks ?? false,
      ...content,
      segment_id: body.segmentId ?? null,
      contact_ids: JSON.stringify(body.contactIds ?? []),
      scheduled_at: body.scheduledAt ? new Date(body.scheduledAt) : null,
    });
    await emitEvent(t.db, queueOf(services), {
      organizationId: t.organizationId,
      type: 'blast.status_changed',
      data: {
        blastId: row.id,
        name: row.name,
        senderIdId: row.sender_id,
        contactPhone: null,
        previousStatus: null,
        status: 'DRAFT',
        recipientCount: null,
        occurredAt: row.created_at.toISOString(),
      },
    });
    return row;
  });
}

export function listBlasts(tenant: Tenant, status: BlastStatus | undefined, page: PageRequest) {
  return q.listBlasts(tenant.db, tenant.organizationId, status, page);
}

async function getBlast(tenant: Tenant, id: string): Promise<BlastRow> {
  return found(await q.getBlast(tenant.db, tenant.organizationId, id), 'Blast');
}

async function lockBlast(tenant: Tenant, id: string): Promise<BlastRow> {
  return found(await q.getBlast(tenant.db, tenant.organizationId, id, { forUpdate: true }), 'Blast');
}

export async function getBlastDetail(tenant: Tenant, id: string): Promise<{ blast: BlastRow; progress: S['BlastProgress'] | null }> {
  const blast = await getBlast(tenant, id);
  return { blast, progress: blast.launched_at ? await progressOf(tenant, blast) : null };
}

export function updateBlast(tenant: Tenant, services: Services, id: string, body: S['BlastUpdateRequest']): Promise<BlastRow> {
  const extra = Object.keys(body).filter(
    (k) => !['name', 'senderId', 'messageType', 'fallbackToSms', 'trackLinks', 'scheduledAt'].includes(k),
  );
  if (extra.length)
    throw badRequest(
      'Content and audience have their own operations.',
      extra.map((k) => ({ field: bodyField(k), message: 'not allowed here' })),
    );
  return inTenantTransaction(tenant, async (t) => {
    const blast = await lockBlast(t, id);
    assertTransition('update', blast.status);
    if (body.senderId !== undefined) {
      await checkReferences(t, { senderId: body.senderId });
      // A template is sent from the sender it was approved for: the new sender must be that one.
      const saved = { contentJson: blast.content_json as BlastMessageContent | null, variants: blast.variants as BlastVariant[] | null };
      if (body.senderId !== blast.sender_id) await checkContentTemplates(t, saved, body.senderId, bodyField('senderId'));
    }
    let scheduledAt: Date | null | undefined;
    if (body.scheduledAt !== undefined) {
      if (blast.status === 'SCHEDULED') scheduledAt = assertScheduleTime(body.scheduledAt, bodyField('scheduledAt'));
      else scheduledAt = body.scheduledAt === null ? null : new Date(body.scheduledAt);
    }
    const row = await q.updateBlast(t.db, t.organizationId, id, {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.senderId !== undefined ? { sender_id: body.senderId } : {}),
      ...(body.messageType !== undefined ? { message_type: body.messageType } : {}),
      ...(body.fallbackToSms !== undefined ? { fallback_to_sms: body.fallbackToSms } : {}),
      ...(body.trackLinks !== undefined ? { track_links: body.trackLinks } : {}),
      ...(scheduledAt !== undefined ? { scheduled_at: scheduledAt } : {}),
    });
    if (blast.status === 'SCHEDULED' && scheduledAt) await queueScheduledStart(t, services, id, scheduledAt);
    return row;
  });
}

export function deleteBlast(tenant: Tenant, id: string): Promise<void> {
  return inTenantTransaction(tenant, async (t) => {
    const blast = await lockBlast(t, id);
    assertTransition('delete', blast.status);
    await q.deleteBlast(t.db, t.organizationId, id);
  });
}

export function updateBlastContent(tenant: Tenant, id: string, body: S['BlastContentRequest']): Promise<BlastRow> {
  return inTenantTransaction(tenant, async (t) => {
    const blast = await lockBlast(t, id);
    assertTransition('update', blast.status);
    const columns = contentColumns(body as ContentFields);
    await checkReferences(t, { botId: columns.bot_id ?? undefined });
    await checkContentAssets(t, body as ContentFields);
    await checkContentTemplates(t, body as ContentFields, blast.sender_id);
    return q.updateBlast(t.db, t.organizationId, id, columns);
  });
}

export function updateBlastAudience(tenant: Tenant, id: string, body: AudienceBody): Promise<{ blast: BlastRow; recipientCount: number }> {
  if (!body.segmentId && !body.contactIds?.length)
    throw badRequest('The audience needs segmentId and/or contactIds.', [
      { field: 'body', message: 'segmentId or contactIds is required' },
    ]);
  return inTenantTransaction(tenant, async (t) => {
    const blast = await lockBlast(t, id);
    assertTransition('update', blast.status);
    await checkReferences(t, { segmentId: body.segmentId, contactIds: body.contactIds });
    const row = await q.updateBlast(t.db, t.organizationId, id, {
      segment_id: body.segmentId ?? null,
      contact_ids: JSON.stringify(body.contactIds ?? []),
    });
    const saved = row.segment_id ? await useSavedSegment(t, row.segment_id) : undefined;
    const { segmentPredicate } = await import('../../db/queries/contacts/segments.ts');
    const predicate = saved ? segmentPredicate(saved.query, t.organizationId) : null;
    return { blast: row, recipientCount: await q.countAudience(t.db, t.organizationId, row.contact_ids, predicate) };
  });
}

export async function estimateBlast(tenant: Tenant, id: string): Promise<BlastEstimate> {
  const blast = await getBlast(tenant, id);
  return (await computeEstimate(tenant, blast)).estimate;
}

export type LaunchResult = S['BlastLaunchResult'];

/**
 * Launch: a blast scheduled for later is checked with its estimate (the figures answered); one starting now is
 * checked without counting its audience (assertStartable), which is resolved batch by batch as it sends: the
 * figures are null then, and progress counts the recipients as they are resolved.
 */
export function launchBlast(tenant: Tenant, services: Services, id: string): Promise<LaunchResult> {
  return inTenantTransaction(tenant, async (t) => {
    const blast = await lockBlast(t, id);
    const now = new Date();
    const scheduled = blast.scheduled_at !== null && blast.scheduled_at.getTime() > now.getTime();
    assertTransition(scheduled ? 'launchScheduled' : 'launchNow', blast.status);
    let estimate: BlastEstimate | null = null;
    let row: BlastRow;
    if (scheduled) {
      estimate = (await assertReady(t, blast, now)).estimate;
      row = await moveTo(t, services, blast, 'SCHEDULED', { recipient_count: null });
      await queueScheduledStart(t, services, id, blast.scheduled_at!);
    } else {
      await assertStartable(t, blast, now);
      row = await startSending(t, services, blast);
    }
    return {
      blastId: id,
      previousStatus: blast.status as BlastStatus,
      status: row.status as BlastStatus,
      changedAt: row.updated_at.toISOString(),
      scheduledAt: scheduled ? blast.scheduled_at!.toISOString() : null,
      recipientCount: estimate?.audience.eligible ?? null,
      estimatedCost: estimate?.totalCost ?? null,
    };
  });
}

export function sendBlast(tenant: Tenant, services: Services, id: string): Promise<S['BlastTransition']> {
  return inTenantTransaction(tenant, async (t) => {
    const blast = await lockBlast(t, id);
    assertTransition('send', blast.status);
    await assertStartable(t, blast);
    const cleared = await q.updateBlast(t.db, t.organizationId, id, { scheduled_at: null });
    const row = await startSending(t, services, { ...cleared, status: blast.status });
    return {
      blastId: id,
      previousStatus: blast.status as BlastStatus,
      status: row.status as BlastStatus,
      changedAt: row.updated_at.toISOString(),
    };
  });
}

export function scheduleBlast(
  tenant: Tenant,
  services: Services,
  id: string,
  body: S['BlastScheduleRequest'],
): Promise<S['BlastScheduleResult']> {
  const at = assertScheduleTime(body.scheduledAt, bodyField('scheduledAt'));
  return inTenantTransaction(tenant, async (t) => {
    const blast = await lockBlast(t, id);
    assertTransition('schedule', blast.status);
    await assertReady(t, blast);
    const row =
      blast.status === 'SCHEDULED'
        ? await q.updateBlast(t.db, t.organizationId, id, { scheduled_at: at })
        : await moveTo(t, services, blast, 'SCHEDULED', { scheduled_at: at });
    await queueScheduledStart(t, services, id, at);
    return {
      blastId: id,
      previousStatus: blast.status as BlastStatus,
      status: 'SCHEDULED',
      changedAt: row.updated_at.toISOString(),
      scheduledAt: at.toISOString(),
    };
  });
}

export function cancelBlast(tenant: Tenant, services: Services, id: string): Promise<S['BlastTransition']> {
  return inTenantTransaction(tenant, async (t) => {
    const blast = await lockBlast(t, id);
    assertTransition('cancel', blast.status);
    const row = await moveTo(t, services, blast, 'CANCELLED', { cancelled_at: new Date() });
    await withdrawUnsent(t, services, id);
    return { blastId: id, previousStatus: blast.status as BlastStatus, status: 'CANCELLED', changedAt: row.updated_at.toISOString() };
  });
}

async function progressOf(tenant: Tenant, blast: BlastRow): Promise<S['BlastProgress']> {
  // One snapshot: a batch's commit turns its recipients from pending to accepted and creates their messages, so two
  // reads on different connections could count the same recipients twice (pending and a message: 25 % for 50 %).
  return inTenantTransaction(
    tenant,
    async (t) => {
      const recipients = await q.recipientCounts(t.db, t.organizationId, blast.id);
      const groups = await q.messageGroups(t.db, t.organizationId, blast.id);
      return toProgress(blast, recipients, groups);
    },
    { snapshot: true },
  );
}

export async function getBlastProgress(tenant: Tenant, id: string): Promise<S['BlastProgress']> {
  return progressOf(tenant, await getBlast(tenant, id));
}

/** Replies and opt-outs count within this many days of the message (BlastStats). */
const ENGAGEMENT_DAYS = 7;

export async function getBlastStats(
  tenant: Tenant,
  id: string,
): Promise<{ blast: BlastRow; groups: q.BlastMessageRow[]; engagement: Awaited<ReturnType<typeof q.engagement>> }> {
  const blast = await getBlast(tenant, id);
  const [groups, engagement] = await Promise.all([
    q.messageGroups(tenant.db, tenant.organizationId, id),
    q.engagement(tenant.db, tenant.organizationId, id, ENGAGEMENT_DAYS),
  ]);
  return { blast, groups, engagement };
}

/**
 * Test sends: through the one send path, each recipient's refusal reported instead of failing the request. Every
 * rule of the send applies, quiet hours included: a MARKETING test to a recipient in their quiet hours is `held`
 * until they end, so testBlast cannot reach handsets at night any more than a send can.
 */
export async function testBlast(tenant: Tenant, services: Services, id: string, body: TestBody): Promise<S['TestBlastResponse']['data']> {
  const phones = body.phones ?? [];
  const contactIds = body.contactIds ?? [];
  if (phones.length + contactIds.length > MAX_TEST_RECIPIENTS) {
    throw badRequest(`At most ${MAX_TEST_RECIPIENTS} test recipients in total.`, [
      { field: 'body', message: `more than ${MAX_TEST_RECIPIENTS} recipients` },
    ]);
  }
  const blast = await getBlast(tenant, id);
  let variantKey: string | null = null;
  let content: SendContent;
  if (blast.content_source === 'variants') {
    const variants = blast.variants as BlastVariant[];
    variantKey = body.variantKey ?? 'A';
    const variant = variants.find((v) => v.key === variantKey);
    if (!variant) throw invalidField(bodyField('variantKey'), `the blast has no variant ${variantKey}`);
    content = toSendContent(variant.content);
  } else {
    if (body.variantKey !== undefined) throw invalidField(bodyField('variantKey'), 'the blast has no A/B variants');
    // A bot blast's test sends its opening message (422 when the bot has none); no session starts.
    content =
      blast.content_source === 'bot'
        ? (await contentsOf(tenant, blast)).contents.get('')!
        : toSendContent(blast.content_json as BlastMessageContent);
  }
  await checkReferences(tenant, { contactIds });
  const recipients: Array<{ phone: string | null; contactId: string | null }> = [
    ...phones.map((phone) => ({ phone, contactId: null })),
    ...contactIds.map((contactId) => ({ phone: null, contactId })),
  ];
  const results: S['BlastTestResult'][] = [];
  for (const r of recipients) {
    let phone = r.phone ?? '';
    let contactId = r.contactId;
    try {
      const message = await inTenantTransaction(tenant, async (t) => {
        if (!contactId) {
          const contact = await ensureContactByPhone(t.db, t.organizationId, phone, parsePhone(phone)?.country ?? null);
          contactId = contact.id;
        }
        return send(t, services, {
          contactId,
          senderId: blast.sender_id,
          messageType: blast.message_type as MessageType,
          fallbackToSms: blast.fallback_to_sms,
          trackLinks: blast.track_links,
          content,
          origin: 'blast', // quiet hours hold a MARKETING test as they hold the blast (testBlast)
        });
      });
      phone = message.contact_phone;
      results.push({ phone, contactId: r.contactId, messageId: message.id, status: message.status, error: null });
    } catch (e) {
      if (!(e instanceof ApiError) || !TEST_REJECTIONS.has(e.code)) throw e;
      if (!phone && contactId) phone = (await q.contactPhone(tenant.db, tenant.organizationId, contactId)) ?? '';
      results.push({
        phone,
        contactId: r.contactId,
        messageId: null,
        status: null,
        error: { code: e.code as ErrorCode, message: e.message },
      });
    }
  }
  return { blastId: id, variantKey, results };
}
