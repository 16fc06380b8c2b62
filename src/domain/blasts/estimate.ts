// The estimate: the audience resolved now, through the same compliance gate (the same SQL), channel plan and
// rendering (segments and price) that the send path bills with — so an estimate equals the bill for the same
// content and the same known capabilities — counted set-based in one aggregate, whatever the audience's size.
// Also the launch checks (sender, bot, eligible recipients, content).
import type { components } from '../../../generated/api.d.ts';
import * as q from '../../db/queries/blasts/blasts.ts';
import { segmentPredicate, type SegmentQuery } from '../../db/queries/contacts/segments.ts';
import { gateRows, type ContactLookup } from '../../db/queries/compliance/gate.ts';
import { prepareGate, refusalMessage, type MessageType } from '../compliance/gate.ts';
import { useSavedSegment } from '../contacts/segments.ts';
import { CARD_OR_MEDIA_PRICE, TEXT_SEGMENT_PRICE, toMoney } from '../messaging/pricing.ts';
import { fallbackChannelFor, render, type Channel, type SendContent } from '../messaging/render.ts';
import { textOf } from '../messaging/send.ts';
import { assertSendable, requireSender } from '../messaging/senders.ts';
import { getBot } from '../../db/queries/bots/bots.ts';
import { blastOpening, type BlastOpening } from '../bots/blast-opening.ts';
import { channelPlanOf } from '../messaging/send.ts';
import { defaultChannelOf } from '../messaging/senders.ts';
import { SESSION_HOURS } from '../messaging/conversation.ts';
import { loadSendFacts } from '../../db/queries/messages/accept.ts';
import { ApiError, bodyField, type FieldError } from '../errors.ts';
import type { Tenant } from '../tenant.ts';
import { resolveBlastTemplate, toSendContent, variantBuckets, type BlastMessageContent, type BlastVariant } from './content.ts';

export type BlastEstimate = components['schemas']['BlastEstimate'];
type Line = components['schemas']['BlastEstimateLine'];
type FailureCode = components['schemas']['BlastFailureReason']['code'];

/** Launch checks failed: the 422 to answer, and the code a system start records in `failureReason`. */
export class NotReady extends ApiError {
  readonly failureCode: FailureCode;
  constructor(
    failureCode: FailureCode,
    code:
      | 'UNPROCESSABLE'
      | 'CONTENT_BLOCKED'
      | 'BOT_NOT_PUBLISHED'
      | 'BOT_NOT_BLASTABLE'
      | 'TEMPLATE_NOT_APPROVED'
      | 'TEMPLATE_PARAMETERS_INVALID',
    message: string,
    details?: FieldError[],
  ) {
    super(422, code, message, details ? { details } : {});
    this.failureCode = failureCode;
  }
}

/** What a blast sends: the content of each variant key ('' for a single content), and a bot blast's opening. */
export type BlastContents = { contents: Map<string, SendContent>; opening: BlastOpening | null };

/**
 * The contents a blast sends now. A bot blast sends its bot's opening (bots/blast-opening.ts), read from the bot's
 * published flow at this moment: NotReady (422 BOT_NOT_PUBLISHED or BOT_NOT_BLASTABLE) when it has none.
 */
export async function contentsOf(tenant: Tenant, blast: q.BlastRow): Promise<BlastContents> {
  const contents = new Map<string, SendContent>();
  if (blast.content_source === 'bot') {
    let opening: BlastOpening;
    try {
      opening = blastOpening(blast.bot_id ? await getBot(tenant.db, tenant.organizationId, blast.bot_id) : undefined);
    } catch (e) {
      if (!(e instanceof ApiError) || (e.code !== 'BOT_NOT_PUBLISHED' && e.code !== 'BOT_NOT_BLASTABLE')) throw e;
      throw new NotReady(e.code, e.code, e.message);
    }
    contents.set('', opening.content);
    return { contents, opening };
  }
  if (blast.content_source === 'variants') for (const v of blast.variants as BlastVariant[]) contents.set(v.key, toSendContent(v.content));
  else contents.set('', toSendContent(blast.content_json as BlastMessageContent));
  return { contents, opening: null };
}

/** The saved segment's SQL predicate, or null; the segment is marked used (a blast keeps it alive). */
export async function segmentOf(tenant: Tenant, blast: q.BlastRow) {
  if (!blast.segment_id) return null;
  const saved = await useSavedSegment(tenant, blast.segment_id);
  // A purged segment contributes nobody (the no-eligible-recipient check then says so).
  return saved ? segmentPredicate(saved.query as SegmentQuery, tenant.organizationId) : null;
}

export type EstimateResult = { estimate: BlastEstimate; eligibleUnits: number; contentBlocked: string | null };

/** Where a content key's content was saved: `body.contentJson`, or the variant's `body.variants.<i>.content`. */
function contentField(blast: q.BlastRow, key: string): string {
  if (blast.content_source !== 'variants') return bodyField('contentJson');
  return bodyField(
    'variants',
    Math.max(
      0,
      (blast.variants as BlastVariant[]).findIndex((v) => v.key === key),
    ),
    'content',
  );
}

/**
 * The contents with their templates filled as the batches' sends fill them (resolveBlastTemplate), so the estimate
 * prices and the gate judges the text sent. A template no longer APPROVED for the blast's sender (paused, rejected,
 * deleted since it was saved): NotReady TEMPLATE_NOT_APPROVED, the blast's failure code.
 */
async function withTemplates(tenant: Tenant, blast: q.BlastRow, contents: Map<string, SendContent>): Promise<Map<string, SendContent>> {
  const out = new Map<string, SendContent>();
  for (const [key, content] of contents) {
    try {
      out.set(key, await resolveBlastTemplate(tenant, content, blast.sender_id, contentField(blast, key)));
    } catch (e) {
      if (!(e instanceof ApiError) || e.status >= 500) throw e;
      const code = e.code === 'TEMPLATE_PARAMETERS_INVALID' ? e.code : 'TEMPLATE_NOT_APPROVED';
      const message = e.code === 'NOT_FOUND' ? 'The chat-app template of the blast no longer exists.' : e.message;
      throw new NotReady('TEMPLATE_NOT_APPROVED', code, message, e.details);
    }
  }
  return out;
}

const NO_REVIEWS: ReadonlySet<string> = new Set();

const EXCLUDED_BY: Record<string, 'dnc' | 'optedOut' | 'noConsent'> = { DNC_LISTED: 'dnc', OPTED_OUT: 'optedOut', NO_CONSENT: 'noConsent' };

/**
 * The audience through the send path's own gate (the same SQL) and channel plan: the gate's rows (SQL), the route
 * plan, and how each content renders per channel. `ignoreQuietHours`: quiet hours are not looked at (they exclude
 * nobody), which spares reading every recipient's quiet group.
 */
async function audienceGate(tenant: Tenant, blast: q.BlastRow, now: Date, ignoreQuietHours: boolean) {
  const { db, organizationId } = tenant;
  const predicate = await segmentOf(tenant, blast);
  const contents = await withTemplates(tenant, blast, (await contentsOf(tenant, blast)).contents);
  const buckets = variantBuckets(blast.content_source === 'variants' ? (blast.variants as BlastVariant[]) : null);
  const recipients = q.audienceRecipients(organizationId, blast.id, blast.contact_ids, predicate, buckets);
  const messageType = blast.message_type as MessageType;
  // The send's own channel plan (channelPlanOf): the channels the sender may carry, who carries its fallback (an RCS
  // agent's fallback sender), the settings each rendering uses. Registrations are taken as the provider's to check
  // (no services here): the launch and each batch's send still refuse a fallback sender that may not send.
  const facts = await loadSendFacts(db, organizationId, {
    senderId: blast.sender_id,
    messageType,
    rules: false,
    quiet: null,
    eventTypes: [],
  });
  const requested = defaultChannelOf(facts.sender);
  const plan = facts.sender ? channelPlanOf(facts, facts.sender, requested, blast.fallback_to_sms, () => NO_REVIEWS) : null;
  const usable = (channel: Channel) => plan?.decision.usable(channel) ?? false;
  const carrier = (content: SendContent) => plan?.carrierOf(fallbackChannelFor(content));
  const settingsFor = (channel: Channel, content: SendContent) => {
    const c = channel === requested ? undefined : carrier(content);
    return c && c.senderId !== null ? c.settings : plan?.decision.settings;
  };
  const gate = await prepareGate(db, organizationId, {
    messageType,
    now,
    ignoreQuietHours,
    texts: new Map([...contents].map(([key, content]) => [key, textOf(content)])),
    recipients,
  });
  // The send's route (accept.ts routeSql): the sender's own channel; on CHATAPP a template needs no open session.
  const routes: q.RoutePlan = {
    requested,
    requestedUsable: usable(requested),
    fallbackAllowed: blast.fallback_to_sms,
    byKey: [...contents].map(([key, content]) => ({
      key,
      fallbackOk: blast.fallback_to_sms && carrier(content)?.senderId != null,
      sessionFree: content.type === 'template',
    })),
    session: { senderId: blast.sender_id, hours: SESSION_HOURS, now },
  };
  // The rows as the estimate reads them all ('join': the planner's scan), or as the launch's look stops at the first
  // eligible one ('probe': each recipient's contact by primary key, streamed in the audience's order).
  const rows = (lookup: ContactLookup) => gateRows(organizationId, recipients, gate, lookup);
  return { predicate, contents, gate, rows, routes, settingsFor };
}

/**
 * The estimate, set-based: the audience through the send path's own gate (the same SQL) and channel plan, counted
 * in one aggregate; each content rendered once per channel. Quiet hours exclude nobody (a held message is still
 * sent): the eligible recipients inside theirs now are counted apart, with the time the last of them is due.
 */
export async function computeEstimate(tenant: Tenant, blast: q.BlastRow, now = new Date()): Promise<EstimateResult> {
  const { db, organizationId } = tenant;
  const { predicate, contents, gate, rows, routes, settingsFor } = await audienceGate(tenant, blast, now, false);
  const groups = await q.estimateGroups(db, organizationId, rows('join'), routes);
  const duplicates = await q.audienceDuplicates(db, organizationId, blast.contact_ids, predicate);

  const excluded = { total: 0, optedOut: 0, dnc: 0, noConsent: 0, invalidPhone: 0, noChannel: 0, sessionClosed: 0, duplicate: duplicates };
  // No route on a usable CHATAPP is a closed session, as the send's refusal says (send.ts noRouteOf).
  const noRoute = routes.requested === 'CHATAPP' && routes.requestedUsable ? 'sessionClosed' : 'noChannel';
  const lines = new Map<string, Line & { costUnits: number }>();
  let audience = 0;
  let eligible = 0;
  let unknown = 0;
  let totalUnits = 0;
  let inQuietHours = 0;
  let heldUntil: Date | null = null;
  let contentBlocked: string | null = null;
  for (const g of groups) {
    audience += g.n;
    const content = contents.get(g.key);
    if (!content) continue; // a variant key no content has (none: every recipient gets a key of the blast's)
    if (g.block_code === 'CONTENT_BLOCKED') {
      contentBlocked ??= refusalMessage(gate, g.key, g.block_code); // the launch answers 422 CONTENT_BLOCKED
      continue;
    }
    if (g.block_code) {
      excluded[EXCLUDED_BY[g.block_code]!] += g.n;
      excluded.total += g.n;
      continue;
    }
    if (g.capability_unknown) unknown += g.n;
    if (!g.route) {
      excluded[noRoute] += g.n;
      excluded.total += g.n;
      continue;
    }
    eligible += g.n;
    if (g.held_until) {
      inQuietHours += g.n;
      if (!heldUntil || g.held_until > heldUntil) heldUntil = g.held_until;
    }
    const channel: Channel = g.route === 'primary' ? routes.requested : fallbackChannelFor(content);
    const rendering = render(channel, content, settingsFor(channel, content));
    // Text and a template's filled text are billed by the segment (render.ts), except as MMS.
    const texty = content.type === 'text' || content.type === 'template';
    const unit: Line['billingUnit'] = channel === 'SMS' || (channel !== 'MMS' && texty) ? 'textSegment' : 'richMessage';
    const unitPrice = unit === 'textSegment' ? TEXT_SEGMENT_PRICE : CARD_OR_MEDIA_PRICE;
    const key = `${channel}/${unit}`;
    const line = lines.get(key) ?? {
      channel,
      billingUnit: unit,
      recipients: 0,
      units: 0,
      unitPrice: toMoney(unitPrice),
      cost: toMoney(0),
      costUnits: 0,
    };
    line.recipients += g.n;
    line.units += Math.round(rendering.costUnits / unitPrice) * g.n;
    line.costUnits += rendering.costUnits * g.n;
    lines.set(key, line);
    totalUnits += rendering.costUnits * g.n;
  }
  excluded.total += duplicates;
  const byChannel = [...lines.values()].map(({ costUnits, ...l }) => ({ ...l, cost: toMoney(costUnits) }));
  return {
    estimate: {
      blastId: blast.id,
      audience: { total: audience + duplicates, eligible, excluded, inQuietHours, heldUntil: heldUntil?.toISOString() ?? null },
      rcsCapabilityUnknown: unknown,
      byChannel,
      totalCost: toMoney(totalUnits),
      estimatedAt: now.toISOString(),
    },
    eligibleUnits: totalUnits,
    contentBlocked,
  };
}

/** The sender must be able to send now: NotReady SENDER_NOT_READY otherwise. */
async function assertSenderReady(tenant: Tenant, blast: q.BlastRow): Promise<void> {
  const sender = await requireSender(tenant.db, tenant.organizationId, blast.sender_id);
  try {
    assertSendable(sender);
  } catch (e) {
    throw new NotReady('SENDER_NOT_READY', 'UNPROCESSABLE', e instanceof Error ? e.message : 'The sender is not send-ready.');
  }
}

const noEligibleRecipients = () =>
  new NotReady(
    'NO_ELIGIBLE_RECIPIENTS',
    'UNPROCESSABLE',
    'The audience has no eligible recipient (every contact is excluded: opted out, DNC, no consent, no channel, or outside its chat-app session for free-form content).',
  );

/** The checks before a scheduled launch or a schedule, with the estimate they answer: throws NotReady (422) on failure. */
export async function assertReady(tenant: Tenant, blast: q.BlastRow, now = new Date()): Promise<EstimateResult> {
  await assertSenderReady(tenant, blast);
  const result = await computeEstimate(tenant, blast, now);
  if (result.contentBlocked) throw new NotReady('CONTENT_BLOCKED', 'CONTENT_BLOCKED', result.contentBlocked);
  if (result.estimate.audience.eligible === 0) throw noEligibleRecipients();
  return result;
}

/**
 * The checks of a start (launch or send now, the scheduled start), without counting the audience: the sender is
 * ready, the bot has an opening, no content is blocked, and one recipient at least passes the gate with a channel
 * (the look stops at the first). The audience itself is resolved slice by slice as the blast sends (sending.ts).
 * Throws NotReady (422) as assertReady does.
 */
export async function assertStartable(tenant: Tenant, blast: q.BlastRow, now = new Date()): Promise<void> {
  await assertSenderReady(tenant, blast);
  const { gate, rows, routes } = await audienceGate(tenant, blast, now, true);
  const blocked = gate.blockedKeys[0];
  if (blocked !== undefined) throw new NotReady('CONTENT_BLOCKED', 'CONTENT_BLOCKED', refusalMessage(gate, blocked, 'CONTENT_BLOCKED'));
  if (!(await q.anyEligible(tenant.db, tenant.organizationId, rows('probe'), routes))) throw noEligibleRecipients();
}
