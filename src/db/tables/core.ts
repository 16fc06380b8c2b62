// Organizations, API keys and sender IDs.
import type { Generated } from 'kysely';
import type { CreatedAt, Timestamp } from './columns.ts';
import type { RcsAgentPhase, SenderIdProvider, SenderIdStatus, SenderIdType } from './enums.ts';

interface OrganizationsTable {
  id: Generated<string>;
  name: string;
  created_at: CreatedAt;
}

export interface ApiKeysTable {
  id: Generated<string>;
  organization_id: string;
  name: string;
  /** Public lookup part, e.g. `msk_a1b2c3d4` (unique). */
  prefix: string;
  /** SHA-256 of the whole secret; the secret itself is never stored. */
  secret_hash: Buffer;
  scopes: string[];
  expires_at: Timestamp | null;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
  created_at: CreatedAt;
}

export interface SenderIdsTable {
  id: Generated<string>;
  organization_id: string;
  name: string;
  type: SenderIdType;
  status: SenderIdStatus;
  /** PROVIDER_A | PROVIDER_B; null only for a DRAFT whose provider is not chosen yet. */
  provider: SenderIdProvider | null;
  /** E.164 number of a LONG_CODE / TOLL_FREE sender (unique; inbound messages are routed by it). */
  phone_number: string | null;
  /** The document's `address` for senders without a phone number: short code digits, alphanumeric name,
   * RCS agent id, chat-app E.164. The answer's `address` is `phone_number ?? address`. */
  address: string | null;
  country_code: string | null;
  is_sandbox: boolean;
  /** Messages per second this sender may hand to its provider. */
  throughput_per_second: Generated<number>;
  /** Every prerequisite for sending is met (see `SenderId.sendReady`); sending also needs status ACTIVE. Omitted
   * on insert: a trigger sets it to `status = 'ACTIVE'` (migration 0011). */
  send_ready: Generated<boolean>;
  /** TESTING | LAUNCH_PENDING | LAUNCHED | REJECTED | SUSPENDED for RCS_AGENT; null otherwise. */
  rcs_agent_phase: RcsAgentPhase | null;
  /** The SenderIdNumber (lease) backing the sender. */
  number_id: string | null;
  status_reason: string | null;
  /** CUSTOMER | PLATFORM | CARRIER while SUSPENDED; null otherwise. */
  suspended_by: string | null;
  activated_at: Timestamp | null;
  suspended_at: Timestamp | null;
  deactivated_at: Timestamp | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface CoreTables {
  organizations: OrganizationsTable;
  api_keys: ApiKeysTable;
  sender_ids: SenderIdsTable;
}
