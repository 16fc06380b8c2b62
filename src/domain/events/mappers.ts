// Events section: stored rows and service results → the document's shapes (events and acquisition campaigns).
import type { components } from '../../../generated/api.d.ts';
import type { CampaignDetail, CampaignView } from '../acquisition/campaigns.ts';
import type { Enrollment } from '../acquisition/enroll.ts';
import type { PublicEnrollResult } from '../acquisition/public-enroll.ts';
import type { BatchItem, RecordedEvent } from './events.ts';

type S = components['schemas'];

export function toEventResult(e: RecordedEvent): S['EventResult'] {
  return {
    eventId: e.eventId,
    event: e.event,
    contactId: e.contactId,
    contactCreated: e.contactCreated,
    receivedAt: e.receivedAt.toISOString(),
    matchedTriggers: e.outcomes.map((o) => ({ triggerId: o.triggerId, name: o.name ?? o.triggerId })),
    messages: e.outcomes.flatMap((o) =>
      o.messageIds.map((messageId) => ({
        triggerId: o.triggerId,
        messageId,
        status: e.statuses.get(messageId) === 'held' ? ('held' as const) : ('queued' as const),
      })),
    ),
    skipped: e.outcomes.flatMap((o) =>
      o.messageIds.length > 0
        ? []
        : o.skipped.map((s) => ({ triggerId: o.triggerId, reason: s.reason as S['EventSkipReason'], message: s.message })),
    ),
  };
}

export function toEventBatchSummary(items: BatchItem[]): S['EventBatchSummary'] {
  const results: S['EventBatchItemResult'][] = items.map((item) =>
    item.ok
      ? { index: item.index, status: 'processed', result: toEventResult(item.result), error: null }
      : {
          index: item.index,
          status: 'failed',
          result: null,
          error: { code: item.error.code, message: item.error.message, ...(item.error.details ? { details: item.error.details } : {}) },
        },
  );
  const processed = results.filter((r) => r.status === 'processed');
  return {
    total: items.length,
    processed: processed.length,
    failed: items.length - processed.length,
    messagesQueued: processed.reduce((n, r) => n + (r.result?.messages.length ?? 0), 0),
    results,
  };
}

// ---------------------------------------------------------------- acquisition campaigns

export function toAcquisitionCampaign(v: CampaignView): S['AcquisitionCampaign'] {
  const r = v.row;
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    type: r.type,
    status: r.status,
    listId: r.list_id,
    keyword: r.keyword,
    shortcode: r.shortcode,
    senderId: r.sender_id,
    welcomeMessage: r.welcome_message,
    consentText: r.consent_text,
    redirectUrl: r.redirect_url,
    enrollmentUrl: v.enrollmentUrl,
    startsAt: r.starts_at?.toISOString() ?? null,
    endsAt: r.ends_at?.toISOString() ?? null,
    confirmedOptIn: r.confirmed_opt_in,
    allowedCountries: r.allowed_countries,
    maxSignupsPerHour: r.max_signups_per_hour,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

export function toAcquisitionCampaignDetail(d: CampaignDetail): S['AcquisitionCampaignDetail'] {
  return {
    ...toAcquisitionCampaign(d),
    stats: {
      enrolledCount: d.stats.enrolledCount,
      newContactCount: d.stats.newContactCount,
      lastEnrolledAt: d.stats.lastEnrolledAt?.toISOString() ?? null,
      pendingCount: d.stats.pendingCount,
    },
    qrCodeGeneratedAt: d.row.qr_code_generated_at?.toISOString() ?? null,
  };
}

export function toAcquisitionEnrollment(e: Enrollment): S['AcquisitionEnrollment'] {
  return {
    enrollmentId: e.row.id,
    campaignId: e.row.campaign_id,
    contactId: e.row.contact_id!,
    phone: e.row.phone,
    status: e.status,
    contactCreated: e.status === 'enrolled' && e.row.contact_created,
    welcomeMessageId: e.welcomeMessageId,
    enrolledAt: e.row.created_at.toISOString(),
  };
}

export function toPublicEnrollResult(r: PublicEnrollResult): S['AcquisitionPublicEnrollResult'] {
  return { status: 'received', message: r.message, redirectUrl: r.redirectUrl };
}
