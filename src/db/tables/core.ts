// Organizations, API keys and sender IDs.
import type { Generated } from 'kysely';
import type { CreatedAt, Timestamp } from './columns.ts';

export interface OrganizationsTable {
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
  type: string;
  status: string;
  provider: string;
  phone_number: string | null;
  is_sandbox: boolean;
  /** Messages per second this sender may hand to its provider. */
  throughput_per_second: Generated<number>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface CoreTables {
  organizations: OrganizationsTable;
  api_keys: ApiKeysTable;
  sender_ids: SenderIdsTable;
}
