// Analytics figures read from the exact message rollup, hourly or daily (src/db/queries/analytics/rollups.ts): the range
// rules shared by every analytics operation (ISO dates, UTC, both days inclusive; defaults; granularity limits)
// and the per-channel and per-sender operations. Shapes are built in mappers.ts.
import {
  compactRollup,
  rollupByChannel,
  rollupBySender,
  rollupTimeline,
  rollupTotals,
  rollupUsage,
  rollupCarried,
  capabilityChecks,
  senderNames,
  type MetricSums,
  type RollupFilter,
  type RollupGranularity,
} from '../../db/queries/analytics/rollups.ts';
import { activityCounts, overviewCounts } from '../../db/queries/analytics/activity.ts';
import { sessionFigures, type SessionRow } from '../../db/queries/analytics/sessions.ts';
import { chargesByBucket } from '../../db/queries/billing/charges.ts';
import type { ChargeKind } from '../../db/tables/billing.ts';
import { CARD_OR_MEDIA_PRICE, passThroughFee, TEXT_SEGMENT_PRICE } from '../messaging/pricing.ts';
import { found, invalidField } from '../errors.ts';
import type { Tenant } from '../tenant.ts';

export type { MetricSums, RollupGranularity };

const DAY_MS = 86_400_000;
/** Default range: the 30 days ending `endDate` (both inclusive). */
const DEFAULT_RANGE_DAYS = 30;
/** Longest range (days, inclusive) per granularity; beyond it 400 VALIDATION_ERROR. */
const MAX_RANGE_DAYS: Partial<Record<RollupGranularity, number>> = { hour: 7, day: 365 };
export const CHANNELS = ['RCS', 'SMS', 'MMS', 'CHATAPP'] as const;

export type Period = { startDate: string; endDate: string; from: Date; to: Date; days: number };
export type RangeQuery = { startDate?: string; endDate?: string };

export const isoDay = (d: Date) => d.toISOString().slice(0, 10);

function parseDay(value: string, field: string): Date {
  const d = new Date(`${value}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(d.getTime()) || isoDay(d) !== value) {
    throw invalidField(field, 'must be an ISO date (YYYY-MM-DD)');
  }
  return d;
}

/**
 * The range after defaults: [from, to) in UTC, `to` the midnight after `endDate`. `location` names the fields in
 * errors: the query of the GET operations, the body of an export.
 */
export function periodOf(query: RangeQuery, now = new Date(), location: 'query' | 'body' = 'query'): Period {
  const end = query.endDate !== undefined ? parseDay(query.endDate, `${location}.endDate`) : new Date(`${isoDay(now)}T00:00:00Z`);
  const start =
    query.startDate !== undefined
      ? parseDay(query.startDate, `${location}.startDate`)
      : new Date(end.getTime() - (DEFAULT_RANGE_DAYS - 1) * DAY_MS);
  if (start > end) throw invalidField(`${location}.startDate`, 'must not be after endDate');
  const days = Math.round((end.getTime() - start.getTime()) / DAY_MS) + 1;
  return { startDate: isoDay(start), endDate: isoDay(end), from: start, to: new Date(end.getTime() + DAY_MS), days };
}

/** Refuses a granularity too fine for the range (hourly up to 7 days, daily up to 365). */
function checkGranularity(period: Period, granularity: RollupGranularity): void {
  const max = MAX_RANGE_DAYS[granularity];
  if (max !== undefined && period.days > max) {
    throw invalidField(
      'query.granularity',
      `${granularity} granularity allows ranges of at most ${max} days (this one has ${period.days}); use a coarser granularity`,
    );
  }
}

/** Start of every UTC bucket overlapping [from, to): hours, days, ISO weeks (Monday), calendar months. */
function bucketsOf(period: Period, granularity: RollupGranularity): Date[] {
  const first = new Date(period.from);
  if (granularity === 'week') first.setUTCDate(first.getUTCDate() - ((first.getUTCDay() + 6) % 7));
  if (granularity === 'month') first.setUTCDate(1);
  const out: Date[] = [];
  for (let b = first; b < period.to;) {
    out.push(b);
    const n = new Date(b);
    if (granularity === 'hour') n.setUTCHours(n.getUTCHours() + 1);
    else if (granularity === 'day') n.setUTCDate(n.getUTCDate() + 1);
    else if (granularity === 'week') n.setUTCDate(n.getUTCDate() + 7);
    else n.setUTCMonth(n.getUTCMonth() + 1);
    b = n;
  }
  return out;
}

export const ZERO: MetricSums = { sent: 0, delivered: 0, read: 0, failed: 0, received: 0, fallback: 0, costUnits: 0 };
const addSums = (a: MetricSums, b: MetricSums): MetricSums => ({
  sent: a.sent + b.sent,
  delivered: a.delivered + b.delivered,
  read: a.read + b.read,
  failed: a.failed + b.failed,
  received: a.received + b.received,
  fallback: a.fallback + b.fallback,
  costUnits: a.costUnits + b.costUnits,
});

/** The timeline zero-filled over every bucket of the range. */
export async function timeline(tenant: Tenant, filter: RollupFilter, period: Period, granularity: RollupGranularity) {
  const rows = await rollupTimeline(tenant.db, tenant.organizationId, filter, granularity);
  const byTime = new Map(rows.map((r) => [r.bucket.getTime(), r]));
  return bucketsOf(period, granularity).map((bucket) => ({ ...(byTime.get(bucket.getTime()) ?? ZERO), bucket }));
}

export type Filters = { brandId?: string; campaignId?: string };

/** Figures per carrying channel: always RCS, SMS, MMS, CHATAPP in that order (zero-filled). */
export async function getProtocols(tenant: Tenant, query: RangeQuery & Filters) {
  const period = periodOf(query);
  const filter: RollupFilter = { from: period.from, to: period.to, brandId: query.brandId, campaignId: query.campaignId };
  const rows = await rollupByChannel(tenant.db, tenant.organizationId, filter);
  const totalSent = rows.reduce((n, r) => n + r.sent, 0);
  const protocols = CHANNELS.map((channel) => ({ channel, sums: rows.find((r) => r.channel === channel) ?? ZERO }));
  return { period, brandId: query.brandId ?? null, campaignId: query.campaignId ?? null, totalSent, protocols };
}

/** One entry per sender ID with a message in the range, most `sent` first (ties by id). */
export async function listSenderFigures(tenant: Tenant, query: RangeQuery & Filters) {
  const period = periodOf(query);
  const rows = await rollupBySender(tenant.db, tenant.organizationId, {
    from: period.from,
    to: period.to,
    brandId: query.brandId,
    campaignId: query.campaignId,
  });
  const names = new Map(
    (
      await senderNames(
        tenant.db,
        tenant.organizationId,
        rows.map((r) => r.senderId),
      )
    ).map((s) => [s.id, s]),
  );
  return rows
    .sort((a, b) => b.sent - a.sent || (a.senderId < b.senderId ? -1 : a.senderId > b.senderId ? 1 : 0))
    .map((r) => ({
      sums: r,
      senderId: r.senderId,
      name: names.get(r.senderId)?.name ?? null,
      type: names.get(r.senderId)?.type ?? 'UNKNOWN',
    }));
}

/** Totals, per-channel breakdown (channels with messages, most `sent` first) and timeline of one sender ID. */
export async function getSenderFigures(tenant: Tenant, senderId: string, query: RangeQuery & { granularity?: RollupGranularity }) {
  const [sender] = await senderNames(tenant.db, tenant.organizationId, [senderId]);
  const s = found(sender, 'Sender ID');
  const granularity = query.granularity ?? 'day';
  const period = periodOf(query);
  checkGranularity(period, granularity);
  const filter: RollupFilter = { from: period.from, to: period.to, senderId };
  const [totals, channels, points] = await Promise.all([
    rollupTotals(tenant.db, tenant.organizationId, filter),
    rollupByChannel(tenant.db, tenant.organizationId, filter),
    timeline(tenant, filter, period, granularity),
  ]);
  const byChannel = channels
    .filter((c) => (CHANNELS as readonly string[]).includes(c.channel))
    .sort((a, b) => b.sent - a.sent || a.channel.localeCompare(b.channel));
  return { senderId: s.id, name: s.name, type: s.type, period, granularity, totals, byChannel, timeline: points };
}

/**
 * Billable usage: 0.0039 USD per text segment, 0.0150 USD per card or media message, no per-call fee — so
 * capability checks are counted at a unit price of 0 — and the carriers' per-message pass-through fees by sender
 * class (passThroughFee) on the SMS/MMS messages a carrier took: the pass-through line counts those messages, at
 * cost. The registry's and number fees come from the charges ledger (src/domain/submissions/fees.ts), one line per
 * kind counting charges (campaign-months, number-months, vettings, brand registrations, campaign vettings), each in the bucket of the day its period
 * starts. The total is the sum of the lines.
 */
const CAPABILITY_CHECK_PRICE = 0;
/** The usage line of each kind of ledger charge, in the order the lines are listed. */
const CHARGE_LINES = [
  ['campaign_fee', 'campaign_monthly'],
  ['number_fee', 'number_monthly'],
  ['vetting_fee', 'vetting'],
  ['brand_fee', 'brand_registration'],
  ['campaign_vetting_fee', 'campaign_vetting'],
] as const satisfies ReadonlyArray<readonly [string, ChargeKind]>;

export async function getUsage(tenant: Tenant, query: RangeQuery & Filters & { granularity?: 'day' | 'month' }) {
  const granularity = query.granularity ?? 'day';
  const period = periodOf(query);
  const filter: RollupFilter = { from: period.from, to: period.to, brandId: query.brandId, campaignId: query.campaignId };
  const [usage, checks, carried, charged] = await Promise.all([
    rollupUsage(tenant.db, tenant.organizationId, filter, granularity),
    capabilityChecks(tenant.db, tenant.organizationId, period.from, period.to, granularity),
    rollupCarried(tenant.db, tenant.organizationId, filter, granularity),
    chargesByBucket(tenant.db, tenant.organizationId, filter, granularity),
  ]);
  const chargedAt = new Map<number, number>();
  const byKind = new Map<ChargeKind, { charges: number; units: number }>();
  for (const c of charged) {
    chargedAt.set(c.bucket.getTime(), (chargedAt.get(c.bucket.getTime()) ?? 0) + c.units);
    const k = byKind.get(c.kind) ?? { charges: 0, units: 0 };
    byKind.set(c.kind, { charges: k.charges + c.charges, units: k.units + c.units });
  }
  const feesAt = new Map<number, { messages: number; units: number }>();
  for (const c of carried) {
    const fee = passThroughFee({ type: c.senderType, isSandbox: c.isSandbox }, c.channel);
    if (fee === 0) continue;
    const at = feesAt.get(c.bucket.getTime()) ?? { messages: 0, units: 0 };
    feesAt.set(c.bucket.getTime(), { messages: at.messages + c.messages, units: at.units + c.messages * fee });
  }
  const usageAt = new Map(usage.map((u) => [u.bucket.getTime(), u]));
  const checksAt = new Map(checks.map((c) => [c.bucket.getTime(), c.checks]));
  const timeline = bucketsOf(period, granularity).map((bucket) => {
    const u = usageAt.get(bucket.getTime());
    const capabilityChecks = checksAt.get(bucket.getTime()) ?? 0;
    const textSegments = u?.textSegments ?? 0;
    const richMessages = u?.richMessages ?? 0;
    const fees = feesAt.get(bucket.getTime()) ?? { messages: 0, units: 0 };
    const charges = chargedAt.get(bucket.getTime()) ?? 0;
    return {
      date: isoDay(bucket),
      textSegments,
      richMessages,
      capabilityChecks,
      feeMessages: fees.messages,
      feeUnits: fees.units,
      costUnits:
        textSegments * TEXT_SEGMENT_PRICE +
        richMessages * CARD_OR_MEDIA_PRICE +
        capabilityChecks * CAPABILITY_CHECK_PRICE +
        fees.units +
        charges,
    };
  });
  const sum = (k: 'textSegments' | 'richMessages' | 'capabilityChecks' | 'feeMessages' | 'feeUnits') =>
    timeline.reduce((n, p) => n + p[k], 0);
  const lines = [
    { item: 'text_segment' as const, quantity: sum('textSegments'), unitPrice: TEXT_SEGMENT_PRICE },
    { item: 'rich_message' as const, quantity: sum('richMessages'), unitPrice: CARD_OR_MEDIA_PRICE },
    { item: 'capability_check' as const, quantity: sum('capabilityChecks'), unitPrice: CAPABILITY_CHECK_PRICE },
    { item: 'pass_through_fee' as const, quantity: sum('feeMessages'), unitPrice: null, atCost: sum('feeUnits') },
    ...CHARGE_LINES.map(([item, kind]) => ({
      item,
      quantity: byKind.get(kind)?.charges ?? 0,
      unitPrice: null,
      atCost: byKind.get(kind)?.units ?? 0,
    })),
  ].map(({ atCost, ...l }) => ({ ...l, costUnits: atCost ?? (l.unitPrice === null ? 0 : l.quantity * l.unitPrice) }));
  return {
    period,
    granularity,
    brandId: query.brandId ?? null,
    campaignId: query.campaignId ?? null,
    lines,
    totalUnits: lines.reduce((n, l) => n + l.costUnits, 0),
    timeline,
  };
}

const TREND_PERIODS = { '7d': 7, '30d': 30, '90d': 90 } as const;
export type TrendPeriod = keyof typeof TREND_PERIODS;

/** The `period` days ending today (UTC) against the same number of days just before. */
export async function getTrends(tenant: Tenant, query: { period?: TrendPeriod }, now = new Date()) {
  const name = query.period ?? '30d';
  const days = TREND_PERIODS[name];
  const current = periodOf({}, now);
  const currentPeriod = periodOf({ endDate: current.endDate, startDate: isoDay(new Date(current.to.getTime() - days * DAY_MS)) });
  const previousPeriod = periodOf({
    startDate: isoDay(new Date(currentPeriod.from.getTime() - days * DAY_MS)),
    endDate: isoDay(new Date(currentPeriod.from.getTime() - DAY_MS)),
  });
  const figures = async (p: Period) => {
    const [sums, activity] = await Promise.all([
      rollupTotals(tenant.db, tenant.organizationId, { from: p.from, to: p.to }),
      activityCounts(tenant.db, tenant.organizationId, p.from, p.to),
    ]);
    return { sums, activity };
  };
  const [cur, prev] = await Promise.all([figures(currentPeriod), figures(previousPeriod)]);
  return { period: name, current: currentPeriod, previous: previousPeriod, cur, prev };
}

const SESSION_SOURCES = ['blast', 'bot', 'inbound', 'api', 'event', 'acquisition'] as const;
type SessionFigures = Omit<SessionRow, 'day' | 'source'>;
const NO_SESSIONS: SessionFigures = { sessions: 0, uniqueContacts: 0, inboundMessages: 0, outboundMessages: 0, durationSeconds: 0 };

/** Sessions started in the range: totals, and the daily series (zero-filled) or the six sources. */
export async function getSessions(tenant: Tenant, query: RangeQuery & { groupBy?: 'source' }) {
  const period = periodOf(query);
  const by: 'day' | 'source' = query.groupBy === 'source' ? 'source' : 'day';
  const [totals, rows] = await Promise.all([
    sessionFigures(tenant.db, tenant.organizationId, period.from, period.to, 'none'),
    sessionFigures(tenant.db, tenant.organizationId, period.from, period.to, by),
  ]);
  const keyOf = (r: SessionRow) => (by === 'day' ? r.day : r.source);
  const byKey = new Map(rows.map((r) => [keyOf(r), r]));
  const keys = by === 'day' ? bucketsOf(period, 'day').map(isoDay) : [...SESSION_SOURCES];
  return {
    period,
    groupBy: by,
    totals: totals[0] ?? NO_SESSIONS,
    timeline: keys.map((key) => ({ key, figures: byKey.get(key) ?? NO_SESSIONS })),
  };
}

/** Folds the pending deltas into the rollup (the job analytics.rollup-compact; `db` is the system handle). */
export const compactMessageRollup = compactRollup;

/** Message totals and timeline (brand/campaign filtered) plus organization-wide conversation, contact and bot counts. */
export async function getOverview(tenant: Tenant, query: RangeQuery & Filters & { granularity?: RollupGranularity }) {
  const granularity = query.granularity ?? 'day';
  const period = periodOf(query);
  checkGranularity(period, granularity);
  const filter: RollupFilter = { from: period.from, to: period.to, brandId: query.brandId, campaignId: query.campaignId };
  // The totals are the timeline's buckets summed (they cover the range exactly): one rollup scan, not two.
  const [points, activity, counts] = await Promise.all([
    timeline(tenant, filter, period, granularity),
    activityCounts(tenant.db, tenant.organizationId, period.from, period.to),
    overviewCounts(tenant.db, tenant.organizationId, period.from, period.to),
  ]);
  const totals = points.reduce(addSums, ZERO);
  return {
    period,
    granularity,
    brandId: query.brandId ?? null,
    campaignId: query.campaignId ?? null,
    totals,
    timeline: points,
    activity,
    counts,
  };
}
