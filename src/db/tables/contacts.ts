// Contacts section tables. The core (contacts, tags, contact_tags) is shared with Compliance and messaging.
import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Json, TimestampDefault } from './columns.ts';

export type AttributeValue = string | number | boolean | null;

export interface ContactsTable {
  id: Generated<string>;
  organization_id: string;
  name: string | null;
  /** E.164, unique per organization. */
  phone: string;
  /** ISO 3166-1 alpha-2 region of the number (from libphonenumber), for time-zone inference. */
  phone_country: string | null;
  attributes: Json<Record<string, AttributeValue>>;
  /** Last known RCS capability: null = never checked. */
  rcs_capable: boolean | null;
  rcs_checked_at: Date | null;
  /** TCPA settings (PATCH /v1/contacts/{id}/tcpa). time_zone null = inferred from the number. */
  time_zone: string | null;
  quiet_hours_start: string | null;
  quiet_hours_end: string | null;
  consent_type: Generated<string>;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

export interface TagsTable {
  id: Generated<string>;
  organization_id: string;
  name: string;
  created_at: CreatedAt;
}

interface ContactTagsTable {
  organization_id: string;
  contact_id: string;
  tag_id: string;
  created_at: CreatedAt;
}

/** A segment query stored by POST /v1/segments/resolve (migration 0009): its id is the `segmentId` blasts take. */
interface SavedSegmentsTable {
  id: Generated<string>;
  organization_id: string;
  /** Hex SHA-256 of the canonical JSON of `query`; unique per organization. */
  query_hash: string;
  /** The SegmentQueryRequest, evaluated again whenever the segment is used. */
  query: Json<unknown>;
  created_at: CreatedAt;
  /** Last resolve (or, once blasts are built, blast) that used it; purged SEGMENT_TTL_DAYS after it. */
  last_used_at: TimestampDefault;
}

export interface ContactsTables extends ContactJobsTables {
  contacts: ContactsTable;
  tags: TagsTable;
  contact_tags: ContactTagsTable;
  saved_segments: SavedSegmentsTable;
}

// ---- Contacts section jobs and billing (migration 0003) ----

/** A fresh completed RCS capability lookup: the billable record. */
interface ContactRcsLookupsTable {
  id: Generated<string>;
  organization_id: string;
  contact_id: string;
  phone: string;
  provider: string;
  rcs_capable: boolean;
  /** numeric(12,4), read as a decimal string (money is never a float). */
  price: ColumnType<string, string, never>;
  currency: string;
  /** API key id that asked for the lookup. */
  actor: string | null;
  created_at: CreatedAt;
}

type BulkTagJobStatus = 'queued' | 'running' | 'completed' | 'failed';

export interface ContactBulkTagJobsTable {
  id: Generated<string>;
  organization_id: string;
  status: ColumnType<BulkTagJobStatus, BulkTagJobStatus | undefined, BulkTagJobStatus>;
  tag_ids: string[];
  contact_ids: string[];
  total: number;
  processed: Generated<number>;
  tagged: Generated<number>;
  already_tagged: Generated<number>;
  not_found: Generated<number>;
  failed: Generated<number>;
  error: string | null;
  created_at: CreatedAt;
  started_at: Date | null;
  completed_at: Date | null;
}

type ImportJobStatus = 'queued' | 'processing' | 'completed' | 'failed';

/** Where one CSV column goes: a contact field, `attribute:<key>`, or `ignore`. */
export type ImportColumn = { header: string; target: string };

export type ImportRowError = {
  row: number;
  column: string | null;
  value: string | null;
  code: 'INVALID_PHONE' | 'MISSING_PHONE' | 'DUPLICATE_IN_FILE' | 'INVALID_VALUE' | 'TOO_MANY_TAGS' | 'MALFORMED_ROW';
  message: string;
};

export interface ContactImportJobsTable {
  id: Generated<string>;
  organization_id: string;
  status: ColumnType<ImportJobStatus, ImportJobStatus | undefined, ImportJobStatus>;
  file_name: string | null;
  columns: Json<ImportColumn[]>;
  default_country: string | null;
  tag_ids: ColumnType<string[], string[] | undefined, string[]>;
  actor: string | null;
  total_rows: number | null;
  processed_rows: Generated<number>;
  imported_rows: Generated<number>;
  updated_rows: Generated<number>;
  skipped_rows: Generated<number>;
  error_count: Generated<number>;
  errors: ColumnType<ImportRowError[], string | undefined, string>;
  lines_done: Generated<number>;
  error: string | null;
  created_at: CreatedAt;
  started_at: Date | null;
  completed_at: Date | null;
}

interface ContactImportFilesTable {
  job_id: string;
  organization_id: string;
  data: Buffer;
  size: number;
  created_at: CreatedAt;
}

interface ContactJobsTables {
  contact_rcs_lookups: ContactRcsLookupsTable;
  contact_bulk_tag_jobs: ContactBulkTagJobsTable;
  contact_import_jobs: ContactImportJobsTable;
  contact_import_files: ContactImportFilesTable;
}
