// Compliance section tables. consent_events (the ConsentAuditLog) and opt_outs are shared: contacts show
// their consent history and opt-out state, the compliance gate and the keyword engine write them.
import type { Generated } from 'kysely';
import type { CreatedAt, Timestamp, TimestampDefault } from './columns.ts';

/** One row per consent change, never updated or deleted (the ConsentAuditLog). */
export interface ConsentEventsTable {
  id: Generated<string>;
  organization_id: string;
  contact_id: string | null;
  phone: string;
  /** ConsentAuditAction: OPT_IN, OPT_OUT, OVERRIDE, CONSENT_UPDATED … (see openapi/schemas/compliance.yaml) */
  action: string;
  /** ConsentAuditSource: KEYWORD, API, IMPORT, OVERRIDE, ACQUISITION … */
  source: string;
  consent_type: string | null;
  keyword: string | null;
  channel: string | null;
  message_id: string | null;
  /** API key id that caused it, when a key did. */
  actor: string | null;
  reason: string | null;
  expires_at: Date | null;
  created_at: CreatedAt;
}

/** Opt-out state per phone (it survives deleting and re-creating the contact). */
interface OptOutsTable {
  organization_id: string;
  phone: string;
  opted_out_at: Date;
  source: string;
  keyword: string | null;
}

/** Do-Not-Contact list: one entry per phone per organization. */
export interface DncEntriesTable {
  id: Generated<string>;
  organization_id: string;
  /** E.164. */
  phone: string;
  reason: string | null;
  /** API (single add) or BATCH. */
  source: string;
  /** API key id that added it. */
  actor: string | null;
  created_at: CreatedAt;
}

/** Content rules checked against outbound text by the compliance gate. */
export interface ContentRulesTable {
  id: Generated<string>;
  organization_id: string;
  name: string;
  pattern: string;
  /** keyword | regex */
  pattern_type: string;
  /** block | flag */
  action: string;
  case_sensitive: boolean;
  /** MessageType values the rule applies to. */
  message_types: string[];
  enabled: boolean;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

/** Organization keyword rules (the global ones are defined in code). */
export interface KeywordRulesTable {
  id: Generated<string>;
  organization_id: string;
  /** Upper case, unique per organization. */
  keyword: string;
  /** OPT_OUT | OPT_IN | HELP | AUTO_REPLY */
  action: string;
  reply_text: string | null;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

/** 24-hour consent overrides; the gate applies one while expires_at is in the future. */
export interface ComplianceOverridesTable {
  id: Generated<string>;
  organization_id: string;
  contact_id: string;
  /** CONSENT_GRANT */
  type: string;
  reason: string;
  actor: string;
  /** The consent_events row (action OVERRIDE) written with it. */
  audit_log_id: string;
  created_at: CreatedAt;
  expires_at: Timestamp;
}

export interface ComplianceTables {
  consent_events: ConsentEventsTable;
  opt_outs: OptOutsTable;
  dnc_entries: DncEntriesTable;
  content_rules: ContentRulesTable;
  keyword_rules: KeywordRulesTable;
  compliance_overrides: ComplianceOverridesTable;
}
