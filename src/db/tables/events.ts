// Events section tables: recorded business events, acquisition campaigns and enrollments (migration 0020), and
// the public sign-ups waiting for the handset's confirmation (migration 0040).
import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Json, Timestamp, TimestampDefault } from './columns.ts';
import type { AcquisitionCampaignStatus, AcquisitionCampaignType } from './enums.ts';

type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface EventsTable {
  id: Generated<string>;
  organization_id: string;
  name: string;
  contact_id: string;
  contact_created: boolean;
  properties: Json<Record<string, unknown>>;
  message_type: string;
  occurred_at: Date;
  received_at: TimestampDefault;
  /** What the trigger sources reported (TriggerOutcome[]), for replay and reporting. */
  outcomes: ColumnType<unknown[], string | undefined, string>;
}

export interface AcquisitionCampaignsTable {
  id: Generated<string>;
  organization_id: string;
  name: string;
  description: string | null;
  type: AcquisitionCampaignType;
  status: AcquisitionCampaignStatus;
  list_id: string;
  keyword: string | null;
  shortcode: string | null;
  sender_id: string | null;
  welcome_message: string | null;
  consent_text: string;
  redirect_url: string | null;
  starts_at: NullableTimestamp;
  ends_at: NullableTimestamp;
  qr_code_generated_at: NullableTimestamp;
  /** Public sign-ups wait for the handset's YES (migration 0040). */
  confirmed_opt_in: Generated<boolean>;
  /** ISO 3166-1 alpha-2 codes public sign-ups may have; null: the sender's country. */
  allowed_countries: string[] | null;
  max_signups_per_hour: Generated<number>;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

export interface AcquisitionPendingEnrollmentsTable {
  id: Generated<string>;
  organization_id: string;
  campaign_id: string;
  contact_id: string;
  phone: string;
  /** The sender the confirmation request went from: the YES must come to it. */
  sender_id: string;
  contact_created: boolean;
  name: string | null;
  attributes: Json<Record<string, string | number | boolean>>;
  tag_ids: ColumnType<string[], string[] | undefined, string[]>;
  consent_text: string;
  ip: string | null;
  user_agent: string | null;
  confirmation_message_id: string | null;
  created_at: CreatedAt;
  expires_at: Timestamp;
}

export interface AcquisitionEnrollmentsTable {
  id: Generated<string>;
  organization_id: string;
  campaign_id: string;
  contact_id: string | null;
  phone: string;
  contact_created: boolean;
  welcome_message_id: string | null;
  consent_text: string;
  consent_event_id: string | null;
  via: 'api' | 'public' | 'keyword';
  ip: string | null;
  user_agent: string | null;
  created_at: CreatedAt;
}

export interface EventsTables {
  events: EventsTable;
  acquisition_campaigns: AcquisitionCampaignsTable;
  acquisition_enrollments: AcquisitionEnrollmentsTable;
  acquisition_pending_enrollments: AcquisitionPendingEnrollmentsTable;
}
