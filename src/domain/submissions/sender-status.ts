// A registry or carrier outcome applied to the sender: through the registry table of
// src/domain/sender-ids/transitions.ts (nothing else decides), with a `sender_id.status_changed` event.
import type { Db } from '../../db/database.ts';
import * as sendersQ from '../../db/queries/sender-ids/senders.ts';
import type { SenderRow } from '../../db/queries/sender-ids/senders.ts';
import { refreshThroughput } from '../sender-ids/sending-rule.ts';
import { decideRegistry, type RegistryEvent } from '../sender-ids/transitions.ts';
import { emitEvent } from '../webhooks/events.ts';
import type { Services } from '../tenant.ts';
import type { TenantDb } from '../../db/tenant.ts';

/** Moves the sender when the table says so (row already locked by the caller or not: last write wins); returns the row. */
export async function applyRegistryEvent(
  db: TenantDb,
  services: Pick<Services, 'queue'>,
  organizationId: string,
  sender: SenderRow,
  event: RegistryEvent,
  reason: string | null,
  now = new Date(),
): Promise<SenderRow> {
  const to = decideRegistry(sender.status, event);
  // A registry outcome can change the sender's throughput class (campaign registered, vetting, verification).
  if (to === null) return { ...sender, throughput_per_second: await refreshThroughput(db, organizationId, sender) };
  const patch: sendersQ.SenderPatch =
    to === 'ACTIVE'
      ? event === 'reinstated'
        ? { status: 'ACTIVE', status_reason: null, suspended_by: null, suspended_at: null }
        : { status: 'ACTIVE', send_ready: true, activated_at: now, status_reason: null }
      : to === 'SUSPENDED'
        ? { status: 'SUSPENDED', status_reason: reason, suspended_by: 'CARRIER', suspended_at: now }
        : to === 'REJECTED'
          ? { status: 'REJECTED', send_ready: false, status_reason: reason }
          : { status: to, send_ready: false, status_reason: reason };
  const updated = (await sendersQ.updateSender(db, organizationId, sender.id, patch))!;
  const row = { ...updated, throughput_per_second: await refreshThroughput(db, organizationId, updated) };
  if (services.queue) {
    await emitEvent(db, services.queue, {
      organizationId,
      type: 'sender_id.status_changed',
      data: {
        senderIdId: sender.id,
        contactPhone: null,
        previousStatus: sender.status as 'DRAFT',
        status: to,
        reason,
        occurredAt: now.toISOString(),
      },
    });
  }
  return row;
}

export type SubmissionType = 'SENDER_ID' | 'RCS_AGENT' | 'BRAND' | 'CAMPAIGN';

/** `submission.status_changed` for one registration or submission. */
export async function emitSubmissionChanged(
  db: Db,
  services: Pick<Services, 'queue'>,
  organizationId: string,
  e: { senderId: string; type: SubmissionType; submissionId: string; previousStatus: string | null; status: string; reasons: string[] },
  now = new Date(),
): Promise<void> {
  if (!services.queue) return;
  await emitEvent(db, services.queue, {
    organizationId,
    type: 'submission.status_changed',
    data: {
      senderIdId: e.senderId,
      contactPhone: null,
      submissionType: e.type,
      submissionId: e.submissionId,
      previousStatus: e.previousStatus,
      status: e.status,
      reasons: e.reasons,
      occurredAt: now.toISOString(),
    },
  });
}
