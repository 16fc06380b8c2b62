// MCP section tables: the platform mapping of an organization and its MCP server configuration (one row each).
import type { CreatedAt, Json, TimestampDefault } from './columns.ts';

/** The link between an organization and its account on the messaging platform, set by a platform admin (CLI). */
export interface PlatformMappingsTable {
  organization_id: string;
  platform_account_id: string;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

export type McpCredentialsKind = 'bearer' | 'basic' | 'oauth2_client_credentials';
type McpHealthState = 'healthy' | 'degraded' | 'unhealthy' | 'unknown';
export type McpChannel = 'RCS' | 'CHATAPP' | 'SMS';

/** One channel's last known health, stored as the document's McpChannelHealth. */
export type StoredChannelHealth = {
  channelType: McpChannel;
  status: McpHealthState;
  latencyMs: number | null;
  error: string | null;
  checkedAt: string | null;
};

export interface McpConfigsTable {
  organization_id: string;
  base_url: string;
  credentials_type: McpCredentialsKind;
  /** The credentials object as JSON, sealed: `v1:` + base64(iv | tag | ciphertext); a CHECK refuses anything else. */
  credentials: string;
  /** `••••` + the last 4 characters of the secret part (token, password, client secret). */
  credentials_hint: string;
  health: Json<StoredChannelHealth[]>;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

export interface McpTables {
  platform_mappings: PlatformMappingsTable;
  mcp_configs: McpConfigsTable;
}
