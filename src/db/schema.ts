// Table types for Kysely. Every table carries organization_id (tenant wall); see src/db/tenant.ts.
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;

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
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface Database {
  organizations: OrganizationsTable;
  api_keys: ApiKeysTable;
  sender_ids: SenderIdsTable;
}

export type ApiKeyRow = Selectable<ApiKeysTable>;
export type NewApiKey = Insertable<ApiKeysTable>;
export type ApiKeyUpdate = Updateable<ApiKeysTable>;
