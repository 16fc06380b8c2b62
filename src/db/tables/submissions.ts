// Submissions and programs tables (migration 0015).
import type { Generated } from 'kysely';
import type { CreatedAt, Json, Timestamp, TimestampDefault } from './columns.ts';
import type {
  BrandEntityType,
  BrandRegistrationStatus,
  BrandVertical,
  CampaignRegistrationStatus,
  CampaignUseCase,
  Channel,
  ProgramSenderRole,
  ProgramStatus,
  SenderSubmissionKind,
  SenderSubmissionStatus,
} from './enums.ts';

type SubmissionError = { code: string; message: string };
type CarrierStatus = { carrier: string; status: 'PENDING' | 'APPROVED' | 'REJECTED' | 'SUSPENDED' };

/** One submission of a sender to its carriers (RCS launch, toll-free verification, sender registration). */
export interface SenderSubmissionsTable {
  id: Generated<string>;
  organization_id: string;
  sender_id: string;
  kind: SenderSubmissionKind;
  status: SenderSubmissionStatus;
  details: Json<Record<string, unknown>>;
  rejection_reasons: Json<string[]>;
  error: Json<SubmissionError> | null;
  /** The registry's own id of the submission (migration 0043); null for the sandbox registry. */
  registry_reference: string | null;
  submitted_at: Timestamp | null;
  decided_at: Timestamp | null;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

export interface BrandRegistrationsTable {
  id: Generated<string>;
  organization_id: string;
  sender_id: string;
  status: BrandRegistrationStatus;
  identity_status: string | null;
  entity_type: BrandEntityType;
  display_name: string;
  company_name: string | null;
  country: string;
  vertical: BrandVertical;
  /** The whole registration body as sent to the registry. */
  details: Json<Record<string, unknown>>;
  registry_brand_id: string | null;
  /** The registry's own id of the brand while it reviews it (migration 0043); null for the sandbox registry. */
  registry_reference: string | null;
  vetting_score: number | null;
  rejection_reasons: Json<string[]>;
  submitted_at: TimestampDefault;
  registered_at: Timestamp | null;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

export interface CampaignRegistrationsTable {
  id: Generated<string>;
  organization_id: string;
  sender_id: string;
  brand_registration_id: string;
  status: CampaignRegistrationStatus;
  use_case: CampaignUseCase;
  sub_use_cases: Json<CampaignUseCase[]>;
  description: string;
  details: Json<Record<string, unknown>>;
  registry_campaign_id: string | null;
  /** The registry's own id of the campaign while it reviews it (migration 0043); null for the sandbox registry. */
  registry_reference: string | null;
  carrier_statuses: Json<CarrierStatus[]>;
  rejection_reasons: Json<string[]>;
  /** numeric: read as a string. */
  monthly_fee: string | null;
  submitted_at: TimestampDefault;
  registered_at: Timestamp | null;
  expires_at: Timestamp | null;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

export interface ProgramsTable {
  id: Generated<string>;
  organization_id: string;
  name: string;
  status: ProgramStatus;
  channels: Channel[];
  sender_id: string;
  brand_registration_id: string | null;
  campaign_registration_id: string | null;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

export interface ProgramSendersTable {
  id: Generated<string>;
  organization_id: string;
  program_id: string;
  sender_id: string;
  role: ProgramSenderRole;
  status: string;
  attached_at: TimestampDefault;
  detached_at: Timestamp | null;
}

export interface RcsAgentLaunchesTable {
  sender_id: string;
  organization_id: string;
  requested_at: TimestampDefault;
}

export interface SubmissionsTables {
  rcs_agent_launches: RcsAgentLaunchesTable;
  sender_submissions: SenderSubmissionsTable;
  brand_registrations: BrandRegistrationsTable;
  campaign_registrations: CampaignRegistrationsTable;
  programs: ProgramsTable;
  program_senders: ProgramSendersTable;
}
