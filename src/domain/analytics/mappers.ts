// Analytics section: stored rows → the document's shapes. The message report's rows as JSON (toReportRow) and as
// CSV (the same rows, `cost` split into cost and currency).
import type { components } from '../../../generated/api.d.ts';
import type { MessageReportDbRow } from '../../db/queries/analytics/message-report.ts';
import { toCsv, type CsvValue } from '../../lib/csv.ts';
import { toMoney } from '../messaging/pricing.ts';
import type { BlastFigures } from './blast.ts';
import type { BotFunnel, BotSummary } from './bots.ts';
import type { Top } from './top.ts';

type Schemas = components['schemas'];
export type MessageReportRow = Schemas['MessageReportRow'];

export function toReportRow(r: MessageReportDbRow): MessageReportRow {
  return {
    messageId: r.id,
    kind: r.direction === 'inbound' ? 'mo' : 'mdr',
    direction: r.direction,
    createdAt: r.created_at.toISOString(),
    receiptAt: r.receipt_at?.toISOString() ?? null,
    contactId: r.contact_id,
    contactPhone: r.contact_phone,
    senderId: r.sender_id,
    programId: r.program_id,
    brand: r.brand,
    campaign: r.campaign,
    carrier: r.carrier,
    channel: r.requested_channel,
    actualChannel: r.channel,
    fallback: r.is_fallback ? 'fallback' : 'primary',
    fallbackReason: r.fallback_reason,
    messageType: r.message_type,
    status: r.status,
    errorCode: r.error_code,
    segments: r.segments,
    cost: r.cost_units === null ? null : toMoney(r.cost_units),
    blastId: r.blast_id,
    conversationId: r.conversation_id,
    botId: r.bot_id,
    eventTriggerId: r.event_trigger_id,
    acquisitionCampaignId: r.acquisition_campaign_id,
  };
}

/**
 * CSV columns: the row's fields in order, `cost` split into `cost` (amount) and `currency`. Written by the shared
 * writer (src/lib/csv.ts), which neutralises formula-like strings (an error code `=HYPERLINK(…)` becomes
 * `'=HYPERLINK(…)`); `segments` is a number and the amount a plain decimal, both left as they are.
 */
const MESSAGE_REPORT_COLUMNS = [
  'messageId',
  'kind',
  'direction',
  'createdAt',
  'receiptAt',
  'contactId',
  'contactPhone',
  'senderId',
  'programId',
  'brand',
  'campaign',
  'carrier',
  'channel',
  'actualChannel',
  'fallback',
  'fallbackReason',
  'messageType',
  'status',
  'errorCode',
  'segments',
  'cost',
  'currency',
  'blastId',
  'conversationId',
  'botId',
  'eventTriggerId',
  'acquisitionCampaignId',
] as const;

export function messageReportCsv(rows: readonly MessageReportRow[]): string {
  return toCsv(
    MESSAGE_REPORT_COLUMNS,
    rows.map((r): Record<string, CsvValue> => ({ ...r, cost: r.cost?.amount ?? null, currency: r.cost?.currency ?? null })),
  );
}

// ---- Figures (figures.ts): rollup sums → AnalyticsMessageMetrics and friends. Rates: 4 decimals, 0 when the
// denominator is 0. Money from integer units (toMoney), so the cost equals the message report's sum exactly.
type Sums = { sent: number; delivered: number; read: number; failed: number; received: number; fallback: number; costUnits: number };
type Period = { startDate: string; endDate: string };

const rate = (part: number, whole: number): number => (whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000);

function toMetrics(s: Sums): Schemas['AnalyticsMessageMetrics'] {
  return {
    sent: s.sent,
    delivered: s.delivered,
    read: s.read,
    failed: s.failed,
    received: s.received,
    fallback: s.fallback,
    deliveryRate: rate(s.delivered, s.sent),
    readRate: rate(s.read, s.delivered),
    cost: toMoney(s.costUnits),
  };
}

function toTimelinePoint(p: Sums & { bucket: Date }): Schemas['AnalyticsTimelinePoint'] {
  return {
    bucketStart: p.bucket.toISOString().replace('.000Z', 'Z'),
    sent: p.sent,
    delivered: p.delivered,
    read: p.read,
    failed: p.failed,
    received: p.received,
    fallback: p.fallback,
    cost: toMoney(p.costUnits),
  };
}

const toPeriod = (p: Period): Schemas['AnalyticsPeriod'] => ({ startDate: p.startDate, endDate: p.endDate });

function toChannelMetrics(channel: string, s: Sums, totalSent: number): Schemas['AnalyticsChannelMetrics'] {
  return { channel: channel as Schemas['AnalyticsChannelMetrics']['channel'], share: rate(s.sent, totalSent), metrics: toMetrics(s) };
}

export function toProtocols(r: {
  period: Period;
  brandId: string | null;
  campaignId: string | null;
  totalSent: number;
  protocols: Array<{ channel: string; sums: Sums }>;
}): Schemas['AnalyticsProtocols'] {
  return {
    period: toPeriod(r.period),
    brandId: r.brandId,
    campaignId: r.campaignId,
    protocols: r.protocols.map((p) => toChannelMetrics(p.channel, p.sums, r.totalSent)),
  };
}

export function toSenderSummary(r: { senderId: string; name: string | null; type: string; sums: Sums }): Schemas['AnalyticsSenderSummary'] {
  return { senderId: r.senderId, name: r.name, type: r.type, metrics: toMetrics(r.sums) };
}

export function toSenderDetail(r: {
  senderId: string;
  name: string | null;
  type: string;
  period: Period;
  granularity: Schemas['AnalyticsSenderDetail']['granularity'];
  totals: Sums;
  byChannel: Array<Sums & { channel: string }>;
  timeline: Array<Sums & { bucket: Date }>;
}): Schemas['AnalyticsSenderDetail'] {
  return {
    senderId: r.senderId,
    name: r.name,
    type: r.type,
    period: toPeriod(r.period),
    granularity: r.granularity,
    metrics: toMetrics(r.totals),
    byChannel: r.byChannel.map((c) => toChannelMetrics(c.channel, c, r.totals.sent)),
    timeline: r.timeline.map(toTimelinePoint),
  };
}

export function toUsage(r: {
  period: Period;
  granularity: Schemas['AnalyticsUsage']['granularity'];
  brandId: string | null;
  campaignId: string | null;
  lines: Array<{ item: Schemas['AnalyticsUsageLine']['item']; quantity: number; unitPrice: number | null; costUnits: number }>;
  totalUnits: number;
  timeline: Array<{ date: string; textSegments: number; richMessages: number; capabilityChecks: number; costUnits: number }>;
}): Schemas['AnalyticsUsage'] {
  return {
    period: toPeriod(r.period),
    granularity: r.granularity,
    brandId: r.brandId,
    campaignId: r.campaignId,
    lines: r.lines.map((l) => ({
      item: l.item,
      quantity: l.quantity,
      unitPrice: l.unitPrice === null ? null : toMoney(l.unitPrice),
      cost: toMoney(l.costUnits),
    })),
    total: toMoney(r.totalUnits),
    timeline: r.timeline.map((p) => ({
      date: p.date,
      textSegments: p.textSegments,
      richMessages: p.richMessages,
      capabilityChecks: p.capabilityChecks,
      cost: toMoney(p.costUnits),
    })),
  };
}

type Activity = { conversations: number; sessions: number; newContacts: number; optOuts: number };
const TREND_METRICS = [
  'sent',
  'delivered',
  'read',
  'failed',
  'received',
  'fallback',
  'deliveryRate',
  'readRate',
  'conversations',
  'sessions',
  'newContacts',
  'optOuts',
] as const;

function trendValues(s: Sums, a: Activity): Record<(typeof TREND_METRICS)[number], number> {
  return { ...s, deliveryRate: rate(s.delivered, s.sent), readRate: rate(s.read, s.delivered), ...a };
}

const direction = (change: number): 'up' | 'down' | 'flat' => (change > 0 ? 'up' : change < 0 ? 'down' : 'flat');
const changePercent = (current: number, previous: number): number | null =>
  previous === 0 ? null : Math.round(((current - previous) / previous) * 1000) / 10;

export function toTrends(r: {
  period: Schemas['AnalyticsTrends']['period'];
  current: Period;
  previous: Period;
  cur: { sums: Sums; activity: Activity };
  prev: { sums: Sums; activity: Activity };
}): Schemas['AnalyticsTrends'] {
  const c = trendValues(r.cur.sums, r.cur.activity);
  const p = trendValues(r.prev.sums, r.prev.activity);
  return {
    period: r.period,
    current: toPeriod(r.current),
    previous: toPeriod(r.previous),
    metrics: TREND_METRICS.map((metric) => {
      // Rates are ratios of 4 decimals: their difference is rounded the same way (no float noise).
      const change = Math.round((c[metric] - p[metric]) * 10_000) / 10_000;
      return {
        metric,
        current: c[metric],
        previous: p[metric],
        change,
        changePercent: changePercent(c[metric], p[metric]),
        direction: direction(change),
      };
    }),
    cost: {
      current: toMoney(r.cur.sums.costUnits),
      previous: toMoney(r.prev.sums.costUnits),
      changePercent: changePercent(r.cur.sums.costUnits, r.prev.sums.costUnits),
      direction: direction(r.cur.sums.costUnits - r.prev.sums.costUnits),
    },
  };
}

export function toReport(r: {
  id: string;
  name: string;
  frequency: string;
  day_of_week: number | null;
  day_of_month: number | null;
  hour: number;
  recipients: string[];
  datasets: string[];
  active: boolean;
  next_run_at: Date | null;
  last_sent_at: Date | null;
  created_at: Date;
  updated_at: Date;
}): Schemas['AnalyticsReport'] {
  return {
    id: r.id,
    name: r.name,
    frequency: r.frequency as Schemas['AnalyticsReport']['frequency'],
    dayOfWeek: r.day_of_week,
    dayOfMonth: r.day_of_month,
    hour: r.hour,
    recipients: r.recipients,
    datasets: r.datasets as Schemas['AnalyticsReport']['datasets'],
    active: r.active,
    nextRunAt: r.next_run_at?.toISOString() ?? null,
    lastSentAt: r.last_sent_at?.toISOString() ?? null,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

type SessionSums = { sessions: number; uniqueContacts: number; inboundMessages: number; outboundMessages: number; durationSeconds: number };

function toSessionMetrics(s: SessionSums): Schemas['AnalyticsSessionMetrics'] {
  return {
    sessions: s.sessions,
    uniqueContacts: s.uniqueContacts,
    inboundMessages: s.inboundMessages,
    outboundMessages: s.outboundMessages,
    averageDurationSeconds: s.sessions === 0 ? 0 : Math.round((s.durationSeconds / s.sessions) * 10) / 10,
  };
}

export function toSessions(r: {
  period: Period;
  groupBy: 'day' | 'source';
  totals: SessionSums;
  timeline: Array<{ key: string; figures: SessionSums }>;
}): Schemas['AnalyticsSessions'] {
  return {
    period: toPeriod(r.period),
    groupBy: r.groupBy,
    totals: toSessionMetrics(r.totals),
    timeline: r.timeline.map((t) =>
      r.groupBy === 'day'
        ? { date: t.key, ...toSessionMetrics(t.figures) }
        : { source: t.key as Schemas['AnalyticsSessionSource'], ...toSessionMetrics(t.figures) },
    ),
  };
}

export function toOverview(r: {
  period: Period;
  granularity: Schemas['AnalyticsOverview']['granularity'];
  brandId: string | null;
  campaignId: string | null;
  totals: Sums;
  timeline: Array<Sums & { bucket: Date }>;
  activity: Activity;
  counts: { contactsTotal: number; botsPublished: number; botSessions: number };
}): Schemas['AnalyticsOverview'] {
  return {
    period: toPeriod(r.period),
    granularity: r.granularity,
    brandId: r.brandId,
    campaignId: r.campaignId,
    messages: toMetrics(r.totals),
    conversations: { started: r.activity.conversations, sessions: r.activity.sessions },
    contacts: { total: r.counts.contactsTotal, new: r.activity.newContacts, optedOut: r.activity.optOuts },
    bots: { published: r.counts.botsPublished, sessions: r.counts.botSessions },
    timeline: r.timeline.map(toTimelinePoint),
  };
}

/** GET /v1/analytics/bots/{id}: the lifetime summary. */
export function toBotSummary(s: BotSummary): Schemas['AnalyticsBotSummary'] {
  return {
    botId: s.bot.id,
    name: s.bot.name,
    sessions: s.life.sessions,
    uniqueContacts: s.life.uniqueContacts,
    messagesSent: s.messages.sent,
    messagesReceived: s.messages.received,
    completions: s.life.completions,
    completionRate: rate(s.life.completions, s.life.sessions),
    handoffsToHuman: s.life.handoffs,
    averageSessionDurationSeconds: s.life.sessions === 0 ? 0 : Math.round((s.life.durationSeconds / s.life.sessions) * 10) / 10,
    lastActivityAt: s.life.lastActivityAt === null ? null : s.life.lastActivityAt.toISOString(),
    topIntents: s.topIntents,
  };
}

/** GET /v1/analytics/bots/{id}/funnel. */
export function toBotFunnel(f: BotFunnel): Schemas['AnalyticsBotFunnel'] {
  const entered = f.totals.contacts;
  return {
    botId: f.botId,
    version: f.version,
    period: toPeriod(f.period),
    entered,
    completed: f.totals.completedContacts,
    completionRate: rate(f.totals.completedContacts, entered),
    sessions: f.totals.sessions,
    completions: f.totals.completions,
    handoffs: f.totals.handoffs,
    steps: f.steps.map(({ node, position, figures: v, advancedTo }) => ({
      nodeId: node.id,
      nodeType: node.type,
      label: node.name ?? null,
      position,
      entries: v.entries,
      contacts: v.contacts,
      exits: v.stoppedContacts,
      exitsByKind: {
        advanced: v.advanced,
        completed: v.completed,
        handedOff: v.handedOff,
        errored: v.errored,
        abandoned: v.abandoned,
        waiting: v.waiting,
      },
      advancedTo,
      conversionRate: rate(v.advanced + v.completed, v.entries),
      dropOff: v.entries - v.advanced - v.completed,
      rateFromStart: Math.min(1, rate(v.contacts, entered)),
    })),
  };
}

/** GET /v1/analytics/intents. */
export function toIntents(r: {
  period: Period;
  totalTaps: number;
  intents: Schemas['AnalyticsIntentCount'][];
}): Schemas['AnalyticsIntents'] {
  return {
    period: toPeriod(r.period),
    totalTaps: r.totalTaps,
    intents: r.intents.map((i) => ({
      value: i.value,
      intentId: i.intentId,
      label: i.label,
      taps: i.taps,
      uniqueContacts: i.uniqueContacts,
    })),
  };
}

/** GET /v1/analytics/top. */
export function toTop(t: Top): Schemas['AnalyticsTop'] {
  return {
    period: toPeriod(t.period),
    blasts: t.blasts.map((b) => ({
      blastId: b.blastId,
      name: b.name,
      sent: b.sent,
      deliveryRate: rate(b.delivered, b.sent),
      readRate: rate(b.read, b.delivered),
      responseRate: rate(b.responders, b.delivered),
    })),
    bots: t.bots.map((b) => ({ botId: b.botId, name: b.name, sessions: b.sessions, completionRate: rate(b.completions, b.sessions) })),
    intents: t.intents.map((i) => ({ value: i.value, label: i.label, taps: i.taps })),
    senders: t.senders.map((s) => ({
      senderId: s.senderId,
      name: s.name,
      sent: s.sums.sent,
      deliveryRate: rate(s.sums.delivered, s.sums.sent),
    })),
  };
}

/** GET /v1/analytics/blasts/{id}. */
export function toBlastFigures(b: BlastFigures): Schemas['AnalyticsBlast'] {
  return {
    blastId: b.blastId,
    granularity: b.granularity,
    recipients: b.recipients,
    metrics: toMetrics(b.totals),
    engagement: { ...b.engagement, responseRate: Math.min(1, rate(b.engagement.uniqueResponders, b.totals.delivered)) },
    byChannel: b.byChannel.map((c) => toChannelMetrics(c.channel, c, b.totals.sent)),
    timeline: b.timeline.map((p) => ({
      bucketStart: p.bucket.toISOString().replace('.000Z', 'Z'),
      sent: p.sent,
      delivered: p.delivered,
      read: p.read,
      failed: p.failed,
      taps: p.taps,
      replies: p.replies,
    })),
    truncated: b.truncated,
  };
}

/** Exports (exports.ts): the message report's CSV columns, and one stored row as CSV cells. */
export const MESSAGE_REPORT_COLUMNS_FOR_EXPORT = MESSAGE_REPORT_COLUMNS;
export function toReportCsvRow(row: MessageReportDbRow): Record<string, CsvValue> {
  const r = toReportRow(row);
  return { ...r, cost: r.cost?.amount ?? null, currency: r.cost?.currency ?? null };
}

/** POST /v1/analytics/export (asynchronous). */
export function toExport(e: {
  row: { id: string; type: string; status: string; expires_at: Date; created_at: Date };
  downloadUrl: string;
}): Schemas['AnalyticsExport'] {
  const ts = (d: Date) => d.toISOString().replace('.000Z', 'Z');
  return {
    exportId: e.row.id,
    type: e.row.type as Schemas['AnalyticsExport']['type'],
    status: e.row.status as Schemas['AnalyticsExport']['status'],
    downloadUrl: e.downloadUrl,
    expiresAt: ts(e.row.expires_at),
    createdAt: ts(e.row.created_at),
  };
}
