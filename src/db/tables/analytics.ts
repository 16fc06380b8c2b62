// Analytics tables: the exact hourly rollup of messages and its pending deltas (migration 0022, appended by a
// trigger on messages, folded by the job analytics.rollup-compact) and the
// scheduled reports.
import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Json, TimestampDefault } from './columns.ts';
interface AnalyticsMessageRollupsTable {
  organization_id: string;
  /** Start of the UTC hour of the messages' created_at. */
  bucket_hour: Date;
  sender_id: string;
  direction: string;
  /** '' when the message has none. */
  requested_channel: string;
  channel: string;
  status: string;
  message_type: string;
  /** Requested as RCS and carried by SMS/MMS. */
  is_fallback: boolean;
  /** The message's attribution (migration 0043): program, brand and campaign registration ids, '' when none. */
  program_id: string;
  brand_id: string;
  campaign_id: string;
  /** A carrier took the message (messages.sent_at is set): the `sent` of every figure. */
  handed: boolean;
  /** bigint: read as strings by pg; the queries cast the sums to int8 and convert. */
  messages: string;
  segments: string;
  cost_units: string;
  /** Billable text segments (messages charged segments × 0.0039 USD). */
  text_segments: string;
  /** Billable card/media messages (charged 0.0150 USD each). */
  rich_messages: string;
  /** Inbound messages that opened a session (messages.opens_session, migration 0028). */
  sessions: string;
}

/** The hourly rollup summed per UTC day on the keys the figures read (migration 0028, kept by the compaction). */
interface AnalyticsMessageRollupsDailyTable {
  organization_id: string;
  bucket_day: Date;
  sender_id: string;
  direction: string;
  /** The carrying channel: the actual one, else the requested one ('' when neither). */
  channel: string;
  status: string;
  is_fallback: boolean;
  program_id: string;
  brand_id: string;
  campaign_id: string;
  handed: boolean;
  messages: string;
  segments: string;
  cost_units: string;
  text_segments: string;
  rich_messages: string;
  sessions: string;
}

export interface AnalyticsReportsTable {
  id: Generated<string>;
  organization_id: string;
  name: string;
  /** weekly | monthly */
  frequency: string;
  day_of_week: number | null;
  day_of_month: number | null;
  hour: number;
  recipients: Json<string[]>;
  datasets: Json<string[]>;
  active: boolean;
  next_run_at: Date | null;
  /** When the last report was sent (or written as .eml without SMTP_URL). */
  last_sent_at: Date | null;
  last_run_at: Date | null;
  /** Object-store key of the last run's file. */
  last_run_key: string | null;
  /** Refused sends since the last sent report (migration 0030). */
  send_failures: Generated<number>;
  /** When the next try may run after a refused send; null when none failed. */
  retry_at: Date | null;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

/** Signed changes appended by the trigger, not yet folded into the rollup (same columns plus an id). */
interface AnalyticsMessageDeltasTable extends AnalyticsMessageRollupsTable {
  id: Generated<string>;
}

export interface AnalyticsTables {
  analytics_message_rollups: AnalyticsMessageRollupsTable;
  analytics_message_rollups_daily: AnalyticsMessageRollupsDailyTable;
  analytics_message_deltas: AnalyticsMessageDeltasTable;
  analytics_reports: AnalyticsReportsTable;
  analytics_exports: AnalyticsExportsTable;
}

/** An asynchronous analytics export (migration 0024). */
export interface AnalyticsExportsTable {
  id: Generated<string>;
  organization_id: string;
  type: string;
  start_date: string;
  end_date: string;
  filters: ColumnType<Record<string, string>, string | undefined, string>;
  /** pending | complete | failed */
  status: ColumnType<string, string | undefined, string>;
  storage_key: string | null;
  error_code: string | null;
  error_message: string | null;
  expires_at: Date;
  created_at: ColumnType<Date, Date | undefined, never>;
  completed_at: Date | null;
}
