// Bot node visits (the funnel, GET /v1/analytics/bots/{id}/funnel): one row each time a session enters a node of
// its flow, written by the bot runtime in the same transaction as the step. `exit` says how the session left the
// node (null while it still waits there); `next_node_id` is set exactly when it advanced to another node. Sessions
// remember the published version they run, so each visit names the version too. The funnel reads one visit per
// (session, node), the latest (`latest`: an earlier visit of a node the session came back to is cleared), over the
// sessions started in a range (`session_started_at`, copied from the session so the range is one index scan).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table bot_sessions add column bot_version integer`.execute(db);
  await sql`
    create table bot_node_visits (
      id bigint generated always as identity primary key,
      organization_id uuid not null references organizations (id) on delete cascade,
      bot_id uuid not null,
      bot_version integer,
      session_id uuid not null references bot_sessions (id) on delete cascade,
      conversation_id uuid not null,
      contact_id uuid not null,
      session_started_at timestamptz not null,
      node_id text not null,
      node_type text not null,
      entered_at timestamptz not null default now(),
      left_at timestamptz,
      exit text check (exit in ('advanced', 'completed', 'handed_off', 'errored', 'abandoned')),
      next_node_id text,
      latest boolean not null default true,
      constraint bot_node_visits_bot_fkey foreign key (organization_id, bot_id) references bots (organization_id, id) on delete cascade,
      constraint bot_node_visits_left check ((exit is null) = (left_at is null)),
      constraint bot_node_visits_next check ((exit = 'advanced') = (next_node_id is not null))
    )`.execute(db);
  // A session waits at one node at most.
  await sql`create unique index bot_node_visits_open_key on bot_node_visits (session_id) where exit is null`.execute(db);
  await sql`create index bot_node_visits_session_idx on bot_node_visits (session_id, node_id)`.execute(db);
  await sql`create index bot_node_visits_funnel_idx on bot_node_visits (organization_id, bot_id, session_started_at) where latest`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists bot_node_visits`.execute(db);
  await sql`alter table bot_sessions drop column if exists bot_version`.execute(db);
}
