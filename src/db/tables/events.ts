// Events section tables: recorded business events, acquisition campaigns and enrollments (migration 0020).
import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Json, TimestampDefault } from './columns.ts';

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
  type: string;
  status: string;
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
  created_at: CreatedAt;
  updated_at: TimestampDefault;
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
}
