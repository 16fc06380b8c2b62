// Webhooks section: endpoints, events, deliveries (one per event and endpoint) and delivery attempts.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table webhook_endpoints (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references organizations (id) on delete cascade,
      url text not null,
      description text,
      events text[] not null,
      secret text not null,
      is_active boolean not null default true,
      disabled_reason text check (disabled_reason in ('manual', 'consecutive_failures', 'gone')),
      disabled_at timestamptz,
      consecutive_failures integer not null default 0,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index webhook_endpoints_org_created_idx on webhook_endpoints (organization_id, created_at desc, id desc)`.execute(db);

  await sql`
    create table webhook_events (
      id uuid primary key,
      organization_id uuid not null references organizations (id) on delete cascade,
      type text not null,
      test boolean not null default false,
      body text not null,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index webhook_events_org_created_idx on webhook_events (organization_id, created_at)`.execute(db);

  await sql`
    create table webhook_deliveries (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null,
      endpoint_id uuid not null references webhook_endpoints (id) on delete cascade,
      event_id uuid not null references webhook_events (id) on delete cascade,
      status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed', 'cancelled')),
      attempts integer not null default 0,
      next_attempt_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  // Cancelling an endpoint's pending retries when it is disabled; cascades from events.
  await sql`create index webhook_deliveries_endpoint_pending_idx on webhook_deliveries (endpoint_id) where status = 'pending'`.execute(db);
  await sql`create index webhook_deliveries_event_idx on webhook_deliveries (event_id)`.execute(db);

  await sql`
    create table webhook_delivery_attempts (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null,
      endpoint_id uuid not null references webhook_endpoints (id) on delete cascade,
      delivery_id uuid references webhook_deliveries (id) on delete cascade,
      event_id uuid not null,
      event_type text not null,
      attempt integer not null check (attempt >= 1),
      test boolean not null,
      url text not null,
      success boolean not null,
      status_code integer,
      error text,
      duration_ms integer,
      attempted_at timestamptz not null,
      completed_at timestamptz,
      next_retry_at timestamptz
    )`.execute(db);
  await sql`create index webhook_attempts_endpoint_idx on webhook_delivery_attempts (organization_id, endpoint_id, attempted_at desc, id desc)`.execute(
    db,
  );
  // Clearing nextRetryAt when pending retries are cancelled; cascades from deliveries.
  await sql`create index webhook_attempts_delivery_idx on webhook_delivery_attempts (delivery_id) where delivery_id is not null`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['webhook_delivery_attempts', 'webhook_deliveries', 'webhook_events', 'webhook_endpoints']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
