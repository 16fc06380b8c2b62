// Figures of one blast since its first send (GET /v1/analytics/blasts/{id}): delivery, engagement, per-channel
// figures and a zero-filled series of at most MAX_BLAST_BUCKETS buckets from the bucket of the first send; later
// activity counts in the totals only and sets `truncated`.
import {
  blastByChannel,
  blastEngagement,
  blastOf,
  blastRecipientCount,
  blastTimeline,
  type BlastBucket,
} from '../../db/queries/analytics/blasts.ts';
import { found } from '../errors.ts';
import type { Tenant } from '../tenant.ts';
import { CHANNELS, ZERO } from './figures.ts';

const MAX_BLAST_BUCKETS = 1440;
const UNIT_MS = { minute: 60_000, hour: 3_600_000 } as const;

export async function getBlastFigures(tenant: Tenant, blastId: string, query: { granularity?: 'minute' | 'hour' }) {
  const { db, organizationId: orgId } = tenant;
  const blast = found(await blastOf(db, orgId, blastId), 'Blast');
  const granularity = query.granularity ?? 'hour';
  const [recipients, channels, engagement, events] = await Promise.all([
    blastRecipientCount(db, orgId, blast.id),
    blastByChannel(db, orgId, blast.id),
    blastEngagement(db, orgId, blast.id),
    blastTimeline(db, orgId, blast.id, granularity),
  ]);
  const launched = channels.length > 0; // no message sent yet: zeros and an empty series
  const totals = channels.reduce(
    (t, c) => ({
      sent: t.sent + c.sent,
      delivered: t.delivered + c.delivered,
      read: t.read + c.read,
      failed: t.failed + c.failed,
      received: t.received + c.received,
      fallback: t.fallback + c.fallback,
      costUnits: t.costUnits + c.costUnits,
    }),
    ZERO,
  );
  const byChannel = channels
    .filter((c): c is typeof c & { channel: string } => c.channel !== null && (CHANNELS as readonly string[]).includes(c.channel))
    .sort((a, b) => b.sent - a.sent || a.channel.localeCompare(b.channel));
  // The series starts at the bucket of the first send (the earliest `sent` event) and ends at the latest event.
  const firstSend = events.find((e) => e.sent > 0)?.bucket;
  const timeline: BlastBucket[] = [];
  let truncated = false;
  if (launched && firstSend) {
    const step = UNIT_MS[granularity];
    const last = events[events.length - 1]!.bucket.getTime();
    const at = new Map(events.map((e) => [e.bucket.getTime(), e]));
    const n = Math.floor((last - firstSend.getTime()) / step) + 1;
    truncated = n > MAX_BLAST_BUCKETS;
    for (let i = 0; i < Math.min(n, MAX_BLAST_BUCKETS); i++) {
      const t = firstSend.getTime() + i * step;
      timeline.push(at.get(t) ?? { bucket: new Date(t), sent: 0, delivered: 0, read: 0, failed: 0, taps: 0, replies: 0 });
    }
  }
  return {
    blastId: blast.id,
    granularity,
    recipients: launched || blast.launched_at !== null ? recipients : 0,
    totals,
    engagement,
    byChannel,
    timeline,
    truncated,
  };
}

export type BlastFigures = Awaited<ReturnType<typeof getBlastFigures>>;
