// Stored blast rows → the document's shapes (openapi/schemas/blasts.yaml).
import type { components } from '../../../generated/api.d.ts';
import type { BlastRow, BlastMessageRow, RecipientCounts } from '../../db/queries/blasts/blasts.ts';
import { toMoney } from '../messaging/pricing.ts';
import { allowedActions } from './transitions.ts';

type S = components['schemas'];
const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toBlast(b: BlastRow): S['Blast'] {
  return {
    id: b.id,
    name: b.name,
    status: b.status,
    messageType: b.message_type,
    senderId: b.sender_id,
    fallbackToSms: b.fallback_to_sms,
    trackLinks: b.track_links,
    contentSource: b.content_source,
    botId: b.bot_id,
    contentJson: (b.content_json ?? null) as S['Blast']['contentJson'],
    variants: (b.variants ?? null) as S['Blast']['variants'],
    segmentId: b.segment_id,
    contactIdCount: b.contact_ids.length,
    recipientCount: b.recipient_count,
    scheduledAt: iso(b.scheduled_at),
    launchedAt: iso(b.launched_at),
    dispatchedAt: iso(b.dispatched_at),
    completedAt: iso(b.completed_at),
    cancelledAt: iso(b.cancelled_at),
    failureReason: (b.failure_reason ?? null) as S['Blast']['failureReason'],
    createdAt: b.created_at.toISOString(),
    updatedAt: b.updated_at.toISOString(),
  };
}

const FINAL_MESSAGE = new Set(['delivered', 'read', 'failed', 'undeliverable', 'revoked']);
type Counts = S['BlastMessageStatusCounts'];

export function toProgress(b: BlastRow, recipients: RecipientCounts, groups: BlastMessageRow[]): S['BlastProgress'] {
  const counts: Counts = { queued: 0, held: 0, sending: 0, sent: 0, delivered: 0, read: 0, failed: 0, undeliverable: 0, revoked: 0 };
  for (const g of groups) if (g.status in counts) counts[g.status as keyof Counts] += g.n;
  const total = Object.values(counts).reduce((s, n) => s + n, 0);
  const final = groups.filter((g) => FINAL_MESSAGE.has(g.status)).reduce((s, g) => s + g.n, 0);
  // The recipients resolved and waiting for their batch have no message yet: they are not dispatched either.
  const resolved = total + recipients.pending;
  const pct = (n: number) => (resolved === 0 ? 0 : Math.round((n / resolved) * 10000) / 100);
  return {
    blastId: b.id,
    status: b.status,
    totalRecipients: total,
    skipped: recipients.skipped,
    skippedByReason: recipients.skippedByReason,
    cancelled: recipients.cancelled,
    pendingRecipients: recipients.pending,
    // Batches of the audience are resolved as the blast sends (sending.ts); a blast stopped before the last one
    // was resolved never resolves the rest.
    audienceResolved: b.audience_done_at !== null,
    counts,
    // A message held for its recipient's quiet hours has not been dispatched: it waits, and says until when.
    percentDispatched: pct(total - counts.queued - counts.held),
    heldUntil: iso(
      groups.reduce<Date | null>(
        (last, g) => (g.status === 'held' && g.held_until && (!last || g.held_until > last) ? g.held_until : last),
        null,
      ),
    ),
    percentComplete: pct(final),
    launchedAt: iso(b.launched_at),
    dispatchedAt: iso(b.dispatched_at),
    completedAt: iso(b.completed_at),
    updatedAt: b.updated_at.toISOString(),
  };
}

export function toDetail(b: BlastRow, progress: S['BlastProgress'] | null): S['BlastDetail'] {
  return { ...toBlast(b), contactIds: b.contact_ids, progress, allowedActions: allowedActions(b.status) };
}

// The terms of AnalyticsMessageMetrics: sent = handed to a carrier (a held, queued or refused-before-any-carrier
// message is not), delivered = delivered or read, failed = failed or undeliverable; revoked messages count nowhere.
const isSent = (g: BlastMessageRow) => g.handed && g.status !== 'revoked';
const DELIVERED = new Set(['delivered', 'read']);
const FAILED = new Set(['failed', 'undeliverable']);
const ratio = (a: number, b: number) => (b === 0 ? 0 : Math.round((a / b) * 10000) / 10000);

export function toStats(
  b: BlastRow,
  groups: BlastMessageRow[],
  engagement: Array<{ variant_key: string | null; replies: number; opt_outs: number; clicks: number }> = [],
): S['BlastStats'] {
  const replies = (key?: string) => engagement.filter((e) => key === undefined || e.variant_key === key).reduce((s, e) => s + e.replies, 0);
  const optOuts = (key?: string) =>
    engagement.filter((e) => key === undefined || e.variant_key === key).reduce((s, e) => s + e.opt_outs, 0);
  const clicks = (key?: string) => engagement.filter((e) => key === undefined || e.variant_key === key).reduce((s, e) => s + e.clicks, 0);
  const sum = (pred: (g: BlastMessageRow) => boolean, of: (g: BlastMessageRow) => number = (g) => g.n) =>
    groups.filter(pred).reduce((s, g) => s + of(g), 0);
  const stat = (rows: (g: BlastMessageRow) => boolean) => ({
    sent: sum((g) => rows(g) && isSent(g)),
    delivered: sum((g) => rows(g) && DELIVERED.has(g.status)),
    read: sum((g) => rows(g) && g.status === 'read'),
    failed: sum((g) => rows(g) && FAILED.has(g.status)),
    cost: toMoney(sum(rows, (g) => g.cost)),
  });
  const all = stat(() => true);
  const channelOf = (g: BlastMessageRow) => g.channel ?? g.planned_channel ?? 'RCS';
  const channels = [...new Set(groups.map(channelOf))].sort();
  const variantKeys = [...new Set(groups.map((g) => g.variant_key).filter((k): k is string => k !== null))].sort();
  return {
    blastId: b.id,
    status: b.status,
    recipients: sum(() => true),
    ...all,
    // Messages whose tracked links were visited (an openUrl action of such a message is one of them: BlastStats).
    clicks: clicks(),
    replies: replies(),
    optOuts: optOuts(),
    fallbacks: sum((g) => g.channel === 'SMS' || g.channel === 'MMS'),
    rates: {
      delivery: ratio(all.delivered, all.sent),
      read: ratio(all.read, all.delivered),
      // A click may arrive before its delivery receipt: the ratio stays within the document's 0–1.
      click: Math.min(1, ratio(clicks(), all.delivered)),
      reply: ratio(replies(), all.delivered),
      optOut: ratio(optOuts(), all.delivered),
    },
    byChannel: channels.map((channel) => ({ channel: channel as S['Channel'], ...stat((g) => channelOf(g) === channel) })),
    byVariant:
      b.content_source === 'variants'
        ? variantKeys.map((key) => ({
            key,
            recipients: sum((g) => g.variant_key === key),
            ...stat((g) => g.variant_key === key),
            clicks: clicks(key),
            replies: replies(key),
            optOuts: optOuts(key),
          }))
        : null,
    updatedAt: new Date().toISOString(),
  };
}
