// MCP section: the organization's platform mapping (its account on the messaging platform, set by a platform
// admin with `admin set-platform-mapping`) and its MCP server configuration. One row each per organization.
// Credentials are stored sealed (AES-256-GCM, `v1:` + base64, src/lib/secrets.ts); a CHECK refuses anything else.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table platform_mappings (
      organization_id uuid primary key references organizations (id) on delete cascade,
      platform_account_id text not null check (length(platform_account_id) between 1 and 255),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);

  await sql`
    create table mcp_configs (
      organization_id uuid primary key references organizations (id) on delete cascade,
      base_url text not null,
      credentials_type text not null check (credentials_type in ('bearer', 'basic', 'oauth2_client_credentials')),
      credentials text not null constraint mcp_configs_credentials_sealed check (credentials like 'v1:%'),
      credentials_hint text not null,
      health jsonb not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists mcp_configs`.execute(db);
  await sql`drop table if exists platform_mappings`.execute(db);
}
