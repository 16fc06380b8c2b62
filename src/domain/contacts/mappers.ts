// Contacts section: stored rows → the document's shapes.
import type { components } from '../../../generated/api.d.ts';
import type { ConsentEventRow } from '../../db/queries/compliance/consent.ts';
import type { BulkTagJobSummary } from '../../db/queries/contacts/bulk-tag-jobs.ts';
import type { ImportJobRow } from '../../db/queries/contacts/imports.ts';
import type { TagRow } from '../../db/queries/contacts/tags.ts';
import { toConsentAuditLog } from '../compliance/mappers.ts';
import type { ContactView } from './contacts.ts';
import { RCS_CHECK_TTL_MS, RCS_LOOKUP_PRICE, type RcsCheckResult } from './rcs-check.ts';

type Contact = components['schemas']['Contact'];
type Tag = components['schemas']['Tag'];
type ContactBulkTagJob = components['schemas']['ContactBulkTagJob'];
type ContactImportJob = components['schemas']['ContactImportJob'];
type ContactRcsCheck = components['schemas']['ContactRcsCheck'];
type ConsentAuditLog = components['schemas']['ConsentAuditLog'];

/** A contact with its tags, opt-out state (per phone) and effective TCPA settings. */
export function toContact({ row, tagIds, optedOut, tcpa }: ContactView): Contact {
  return {
    id: row.id,
    name: row.name,
    phone: row.phone,
    tags: tagIds,
    attributes: row.attributes,
    rcsCapable: row.rcs_capable,
    rcsCheckedAt: row.rcs_checked_at?.toISOString() ?? null,
    tcpa: {
      timeZone: tcpa.timeZone,
      timeZoneSource: tcpa.timeZoneSource,
      quietHoursStart: tcpa.quietHoursStart,
      quietHoursEnd: tcpa.quietHoursEnd,
      consentType: tcpa.consentType,
    },
    optedOut,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** An entry of the contact's consent history (entries written before the contact existed are shown as its own). */
export function toContactConsentEntry(row: ConsentEventRow, contactId: string): ConsentAuditLog {
  return toConsentAuditLog(row, contactId);
}

export function toRcsCheck(check: RcsCheckResult): ContactRcsCheck {
  const completed = check.status === 'COMPLETED';
  return {
    contactId: check.contactId,
    phone: check.phone,
    status: check.status,
    rcsCapable: check.rcsCapable,
    checkedAt: check.checkedAt.toISOString(),
    cached: check.cached,
    expiresAt: completed ? new Date(check.checkedAt.getTime() + RCS_CHECK_TTL_MS).toISOString() : null,
    billable: check.billable,
    cost: check.billable ? { ...RCS_LOOKUP_PRICE } : null,
    failureReason: check.failureReason,
  };
}

export function toTag(row: TagRow): Tag {
  return { id: row.id, name: row.name, createdAt: row.created_at.toISOString() };
}

export function toBulkTagJob(row: BulkTagJobSummary): ContactBulkTagJob {
  return {
    jobId: row.id,
    status: row.status,
    tagIds: row.tag_ids,
    total: row.total,
    processed: row.processed,
    tagged: row.tagged,
    alreadyTagged: row.already_tagged,
    notFound: row.not_found,
    failed: row.failed,
    error: row.error,
    createdAt: row.created_at.toISOString(),
    completedAt: row.completed_at?.toISOString() ?? null,
  };
}

export function toImportJob(row: ImportJobRow): ContactImportJob {
  return {
    jobId: row.id,
    status: row.status,
    fileName: row.file_name,
    totalRows: row.total_rows,
    processedRows: row.processed_rows,
    importedRows: row.imported_rows,
    updatedRows: row.updated_rows,
    skippedRows: row.skipped_rows,
    errorCount: row.error_count,
    errors: row.errors,
    error: row.error,
    createdAt: row.created_at.toISOString(),
    completedAt: row.completed_at?.toISOString() ?? null,
  };
}
