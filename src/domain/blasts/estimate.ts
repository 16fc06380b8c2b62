// The estimate: the audience resolved now, each contact through the same compliance gate, channel plan and
// rendering (segments and price) that acceptMessage bills with — so an estimate equals the bill for the same
// content and the same known capabilities. Also the launch checks (sender, bot, eligible recipients, content).
import type { components } from '../../../generated/api.d.ts';
import * as q from '../../db/queries/blasts/blasts.ts';
import { segmentPredicate, type SegmentQuery } from '../../db/queries/contacts/segments.ts';
import { evaluateCompliance, type MessageType } from '../compliance/gate.ts';
import { useSavedSegment } from '../contacts/segments.ts';
import { CARD_OR_MEDIA_PRICE, TEXT_SEGMENT_PRICE, toMoney } from '../conversations/pricing.ts';
import { render, type Channel, type SendContent } from '../conversations/render.ts';
import { planChannel, textOf } from '../conversations/send.ts';
import { assertSendable, requireSender } from '../conversations/senders.ts';
import { channelAvailability } from '../sender-ids/protocols.ts';
import { ApiError } from '../errors.ts';
import type { Tenant } from '../tenant.ts';
import { toSendContent, variantBuckets, variantForBucket, type BlastMessageContent, type BlastVariant } from './content.ts';

export type BlastEstimate = components['schemas']['BlastEstimate'];
type Line = components['schemas']['BlastEstimateLine'];
type FailureCode = components['schemas']['BlastFailureReason']['code'];

/** Launch checks failed: the 422 to answer, and the code a system start records in `failureReason`. */
export class NotReady extends ApiError {
  readonly failureCode: FailureCode;
  constructor(failureCode: FailureCode, code: 'UNPROCESSABLE' | 'CONTENT_BLOCKED', message: string) {
    super(422, code, message);
    this.failureCode = failureCode;
  }
}

/** The content each variant key (or '' for a single content) sends. */
export function contentsOf(blast: q.BlastRow): Map<string, SendContent> {
  const out = new Map<string, SendContent>();
  if (blast.content_source === 'variants') for (const v of blast.variants as BlastVariant[]) out.set(v.key, toSendContent(v.content));
  else if (blast.content_source === 'content') out.set('', toSendContent(blast.content_json as BlastMessageContent));
  return out;
}

/** The saved segment's SQL predicate, or null; the segment is marked used (a blast keeps it alive). */
export async function segmentOf(tenant: Tenant, blast: q.BlastRow) {
  if (!blast.segment_id) return null;
  const saved = await useSavedSegment(tenant, blast.segment_id);
  // A purged segment contributes nobody (the no-eligible-recipient check then says so).
  return saved ? segmentPredicate(saved.query as SegmentQuery, tenant.organizationId) : null;
}

export type EstimateResult = { estimate: BlastEstimate; eligibleUnits: number; contentBlocked: string | null };

export async function computeEstimate(tenant: Tenant, blast: q.BlastRow, now = new Date()): Promise<EstimateResult> {
  const { db, organizationId } = tenant;
  const predicate = await segmentOf(tenant, blast);
  const { contacts, duplicates } = await q.audienceContacts(db, organizationId, blast.id, blast.contact_ids, predicate);
  const contents = contentsOf(blast);
  const buckets = variantBuckets(blast.content_source === 'variants' ? (blast.variants as BlastVariant[]) : null);
  const usable = await channelAvailability(db, organizationId, blast.sender_id);
  const excluded = { total: 0, optedOut: 0, dnc: 0, noConsent: 0, invalidPhone: 0, noChannel: 0, duplicate: duplicates };
  const lines = new Map<string, Line & { unitUnits: number; costUnits: number }>();
  let eligible = 0;
  let unknown = 0;
  let totalUnits = 0;
  let contentBlocked: string | null = null;
  for (const contact of contacts) {
    const content = contents.get(buckets ? variantForBucket(buckets, contact.bucket) : '');
    if (!content) continue; // bot content: estimated once bots exist
    const verdict = await evaluateCompliance({ db, organizationId, contact, messageType: blast.message_type as MessageType, content: textOf(content), now });
    if (verdict.decision === 'block') {
      const codes = new Set(verdict.reasons.map((r) => r.code));
      if (codes.has('CONTENT_BLOCKED')) contentBlocked ??= verdict.reasons.find((r) => r.code === 'CONTENT_BLOCKED')!.message;
      if (codes.has('DNC_LISTED')) excluded.dnc += 1;
      else if (codes.has('OPTED_OUT')) excluded.optedOut += 1;
      else if (codes.has('NO_CONSENT')) excluded.noConsent += 1;
      else continue; // content blocked: the launch answers 422 CONTENT_BLOCKED
      excluded.total += 1;
      continue;
    }
    // Unknown capability is placed on the fallback channel (BlastEstimate), when fallback is allowed.
    const capability = contact.rcs_capable === null && blast.fallback_to_sms ? false : contact.rcs_capable;
    if (contact.rcs_capable === null) unknown += 1;
    const plan = planChannel('RCS', content, capability, blast.fallback_to_sms, false, usable);
    if (!plan) {
      excluded.noChannel += 1;
      excluded.total += 1;
      continue;
    }
    eligible += 1;
    const rendering = render(plan.planned, content);
    const unit: Line['billingUnit'] = plan.planned === 'SMS' || (plan.planned !== 'MMS' && content.type === 'text') ? 'textSegment' : 'richMessage';
    const unitPrice = unit === 'textSegment' ? TEXT_SEGMENT_PRICE : CARD_OR_MEDIA_PRICE;
    const key = `${plan.planned}/${unit}`;
    const line = lines.get(key) ?? { channel: plan.planned as Channel, billingUnit: unit, recipients: 0, units: 0, unitPrice: toMoney(unitPrice), cost: toMoney(0), unitUnits: unitPrice, costUnits: 0 };
    line.recipients += 1;
    line.units += Math.round(rendering.costUnits / unitPrice);
    line.costUnits += rendering.costUnits;
    lines.set(key, line);
    totalUnits += rendering.costUnits;
  }
  excluded.total += duplicates;
  const byChannel = [...lines.values()].map(({ unitUnits: _u, costUnits, ...l }) => ({ ...l, cost: toMoney(costUnits) }));
  return {
    estimate: {
      blastId: blast.id,
      audience: { total: contacts.length + duplicates, eligible, excluded },
      rcsCapabilityUnknown: unknown,
      byChannel,
      totalCost: toMoney(totalUnits),
      estimatedAt: now.toISOString(),
    },
    eligibleUnits: totalUnits,
    contentBlocked,
  };
}

/** The checks before launch/send/schedule and at a scheduled start: throws NotReady (422) on failure. */
export async function assertReady(tenant: Tenant, blast: q.BlastRow, now = new Date()): Promise<EstimateResult> {
  const sender = await requireSender(tenant.db, tenant.organizationId, blast.sender_id);
  try {
    assertSendable(sender);
  } catch (e) {
    throw new NotReady('SENDER_NOT_READY', 'UNPROCESSABLE', e instanceof Error ? e.message : 'The sender is not send-ready.');
  }
  if (blast.content_source === 'bot') throw new NotReady('BOT_NOT_PUBLISHED', 'UNPROCESSABLE', 'The blast sends a bot, and bots cannot be started by blasts yet.');
  const result = await computeEstimate(tenant, blast, now);
  if (result.contentBlocked) throw new NotReady('CONTENT_BLOCKED', 'CONTENT_BLOCKED', result.contentBlocked);
  if (result.estimate.audience.eligible === 0) {
    throw new NotReady('NO_ELIGIBLE_RECIPIENTS', 'UNPROCESSABLE', 'The audience has no eligible recipient (every contact is excluded: opted out, DNC, no consent or no channel).');
  }
  return result;
}
