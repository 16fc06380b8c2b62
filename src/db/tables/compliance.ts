// Compliance section tables. consent_events (the ConsentAuditLog) and opt_outs are shared: contacts show
// their consent history and opt-out state, the compliance gate and the keyword engine write them.
import type { Generated } from 'kysely';
import type { CreatedAt } from './columns.ts';

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
export interface OptOutsTable {
  organization_id: string;
  phone: string;
  opted_out_at: Date;
  source: string;
  keyword: string | null;
}

export interface ComplianceTables {
  consent_events: ConsentEventsTable;
  opt_outs: OptOutsTable;
}
