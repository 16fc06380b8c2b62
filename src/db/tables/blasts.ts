// Blasts section tables: the blast and its recipients (one row per blast and contact, the idempotency unit).
import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, TimestampDefault } from './columns.ts';
import type { BlastContentSource, BlastStatus, MessageType } from './enums.ts';

type JsonColumn<T> = ColumnType<T, string, string>;

export interface BlastsTable {
  id: Generated<string>;
  organization_id: string;
  name: string;
  status: BlastStatus;
  message_type: MessageType;
  sender_id: string;
  fallback_to_sms: boolean;
  /** Whether the blast's messages are sent with tracked links (migration 0048). */
  track_links: Generated<boolean>;
  content_source: BlastContentSource;
  bot_id: string | null;
  content_json: ColumnType<unknown, string | null, string | null>;
  variants: ColumnType<unknown, string | null, string | null>;
  segment_id: string | null;
  contact_ids: JsonColumn<string[]>;
  recipient_count: number | null;
  /** The audience resolved slice by slice (migration 0054): the last contact id resolved, the slices so far, when the last one was. */
  audience_cursor: string | null;
  audience_batches: Generated<number>;
  audience_done_at: Date | null;
  scheduled_at: Date | null;
  launched_at: Date | null;
  dispatched_at: Date | null;
  completed_at: Date | null;
  cancelled_at: Date | null;
  failure_reason: ColumnType<{ code: string; message: string } | null, string | null, string | null>;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

interface BlastRecipientsTable {
  organization_id: string;
  blast_id: string;
  contact_id: string;
  batch: number;
  variant_key: string | null;
  /** pending → accepted (message_id set) | skipped (skip_reason) | cancelled */
  status: string;
  skip_reason: string | null;
  message_id: string | null;
  updated_at: TimestampDefault;
}

export interface BlastsTables {
  blasts: BlastsTable;
  blast_recipients: BlastRecipientsTable;
}
