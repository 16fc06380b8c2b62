// Changing a contact's TCPA settings: time zone, quiet hours and consent type. Quiet hours may only widen the
// TCPA period (08:00 ≤ end < start ≤ 21:00), checked on the resulting values with the contact locked, so two
// changes cannot combine into a narrower period. A consent type change writes a CONSENT_UPDATED audit entry.
import { inTransaction } from '../../db/database.ts';
import { recordConsentEvent } from '../../db/queries/compliance/consent.ts';
import * as q from '../../db/queries/compliance/contact-tcpa.ts';
import { badRequest, found, invalidField, type FieldError } from '../errors.ts';
import type { Tenant } from '../tenant.ts';
import { minutesOf } from './quiet-hours.ts';
import { DEFAULT_QUIET_HOURS_END, DEFAULT_QUIET_HOURS_START, isKnownTimeZone, resolveTcpa, type TcpaSettings } from './tcpa.ts';

export type ContactRow = q.ContactRow;

export type TcpaUpdate = {
  timeZone?: string | null;
  quietHoursStart?: string;
  quietHoursEnd?: string;
  consentType?: TcpaSettings['consentType'];
};

/** Quiet hours may only widen the TCPA period: 08:00 ≤ end < start ≤ 21:00. */
function quietHoursProblems(start: string, end: string, given: { start: boolean; end: boolean }): FieldError[] {
  const problems: FieldError[] = [];
  const s = minutesOf(start);
  const e = minutesOf(end);
  if (e < minutesOf(DEFAULT_QUIET_HOURS_END))
    problems.push({
      field: 'body.quietHoursEnd',
      message: `must be ${DEFAULT_QUIET_HOURS_END} or later (quiet hours may only widen the TCPA period)`,
    });
  if (s > minutesOf(DEFAULT_QUIET_HOURS_START))
    problems.push({
      field: 'body.quietHoursStart',
      message: `must be ${DEFAULT_QUIET_HOURS_START} or earlier (quiet hours may only widen the TCPA period)`,
    });
  if (problems.length === 0 && e >= s) {
    const field = given.end || !given.start ? 'body.quietHoursEnd' : 'body.quietHoursStart';
    problems.push({ field, message: `quietHoursEnd (${end}) must be before quietHoursStart (${start})` });
  }
  return problems;
}

/** The runtime's canonical spelling of a known zone (`america/chicago` → `America/Chicago`, `US/Eastern` → `America/New_York`). */
function canonicalTimeZone(zone: string): string {
  return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
}

/** 400 for an unknown zone, 404 for a contact not of the organization, 400 for quiet hours narrowing the period. */
export async function updateContactTcpa(
  tenant: Tenant,
  contactId: string,
  body: TcpaUpdate,
): Promise<{ row: ContactRow; tcpa: TcpaSettings }> {
  if (body.timeZone !== undefined && body.timeZone !== null && !isKnownTimeZone(body.timeZone)) {
    throw invalidField('body.timeZone', `is not an IANA time zone known to this server: ${body.timeZone}`);
  }
  const timeZone = body.timeZone ? canonicalTimeZone(body.timeZone) : body.timeZone;
  const orgId = tenant.organizationId;
  const row = await inTransaction(tenant.db, async (tx) => {
    const current = found(await q.getContactForUpdate(tx, orgId, contactId), 'Contact');
    const start = body.quietHoursStart ?? current.quiet_hours_start ?? DEFAULT_QUIET_HOURS_START;
    const end = body.quietHoursEnd ?? current.quiet_hours_end ?? DEFAULT_QUIET_HOURS_END;
    const problems = quietHoursProblems(start, end, { start: body.quietHoursStart !== undefined, end: body.quietHoursEnd !== undefined });
    if (problems.length)
      throw badRequest('Quiet hours may only widen the TCPA period: 08:00 ≤ quietHoursEnd < quietHoursStart ≤ 21:00.', problems);
    const next: q.TcpaColumns = {
      time_zone: timeZone === undefined ? current.time_zone : timeZone,
      quiet_hours_start: body.quietHoursStart ?? current.quiet_hours_start,
      quiet_hours_end: body.quietHoursEnd ?? current.quiet_hours_end,
      consent_type: body.consentType ?? current.consent_type,
    };
    const row = found(await q.updateContactTcpa(tx, orgId, contactId, next), 'Contact'); // locked: always found
    if (next.consent_type !== current.consent_type) {
      await recordConsentEvent(tx, {
        organization_id: orgId,
        contact_id: contactId,
        phone: current.phone,
        action: 'CONSENT_UPDATED',
        source: 'API',
        consent_type: next.consent_type,
        actor: tenant.apiKeyId ?? null,
      });
    }
    return row;
  });
  return { row, tcpa: await resolveTcpa(row) };
}
