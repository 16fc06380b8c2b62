// Analytics section: an exact hourly rollup of the messages table. A database trigger on messages appends, in the
// writer's own transaction, the signed change of every insert, update or delete to analytics_message_deltas; the
// job analytics.rollup-compact (every minute) folds committed deltas into analytics_message_rollups atomically
// (analytics_rollup_compact()). Queries read rollup + pending deltas, so an answer always equals the direct
// aggregate of the messages table (proved in test/analytics.test.ts). One rollup row per organization, hour (UTC, of created_at), sender, direction, requested channel, actual channel, status, message
// type and fallback flag; counts, segments and charged cost units (1/10,000 USD, integers) are summed, and the
// billable items the price list charges: text segments (a message charged segments × 39) and rich messages (a card
// or media message charged 150; src/domain/messaging/pricing.ts). A message change appends −1 × its old
// version and +1 × its new one; rollup rows that sum to no message are removed at compaction.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table analytics_message_rollups (
      organization_id uuid not null references organizations (id) on delete cascade,
      bucket_hour timestamptz not null,
      sender_id uuid not null,
      direction text not null,
      requested_channel text not null default '',
      channel text not null default '',
      status text not null,
      message_type text not null default '',
      is_fallback boolean not null,
      messages bigint not null,
      segments bigint not null,
      cost_units bigint not null,
      text_segments bigint not null,
      rich_messages bigint not null,
      primary key (organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback)
    )`.execute(db);

  // What a message change adds: one signed row per old/new version, appended by the trigger (no upsert, so message
  // writers never wait on each other for a hot rollup row). analytics_rollup_compact() folds them into the rollup.
  await sql`
    create table analytics_message_deltas (
      id bigserial primary key,
      organization_id uuid not null,
      bucket_hour timestamptz not null,
      sender_id uuid not null,
      direction text not null,
      requested_channel text not null,
      channel text not null,
      status text not null,
      message_type text not null,
      is_fallback boolean not null,
      messages bigint not null,
      segments bigint not null,
      cost_units bigint not null,
      text_segments bigint not null,
      rich_messages bigint not null
    )`.execute(db);
  await sql`create index analytics_message_deltas_org on analytics_message_deltas (organization_id, bucket_hour)`.execute(db);

  await sql`
    create function analytics_rollup_apply(m messages, sign integer) returns void language plpgsql as $fn$
    begin
      insert into analytics_message_deltas (organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback, messages, segments, cost_units, text_segments, rich_messages)
      values (m.organization_id, date_trunc('hour', m.created_at at time zone 'UTC') at time zone 'UTC', m.sender_id,
        m.direction, coalesce(m.requested_channel, ''), coalesce(m.channel, ''), m.status, coalesce(m.message_type, ''),
        coalesce(m.requested_channel = 'RCS' and m.channel in ('SMS', 'MMS'), false),
        sign, sign * coalesce(m.segments, 0), sign * coalesce(m.cost_units, 0),
        sign * (case when m.cost_units is not null and m.cost_units = m.segments * 39 then m.segments else 0 end),
        sign * (case when m.cost_units = 150 then 1 else 0 end));
    end
    $fn$`.execute(db);

  // Moves every committed delta into the rollup in one statement: the deleted deltas and the upsert commit together
  // (or not at all), and a concurrent run cannot fold the same delta twice (its delete waits, then finds the rows
  // gone). So the rollup plus the remaining deltas always equal the messages table. Rows that sum to no message
  // are removed. Returns the deltas folded.
  await sql`
    create function analytics_rollup_compact() returns bigint language plpgsql as $fn$
    declare folded bigint;
    begin
      perform pg_advisory_xact_lock(hashtext('analytics_rollup_compact'));
      with moved as (delete from analytics_message_deltas returning *),
      summed as (
        select organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback, sum(messages) as messages, sum(segments) as segments, sum(cost_units) as cost_units,
          sum(text_segments) as text_segments, sum(rich_messages) as rich_messages, count(*) as n
        from moved group by organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback
      ),
      upserted as (
        insert into analytics_message_rollups as r (organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback, messages, segments, cost_units, text_segments, rich_messages)
        select organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback, messages, segments, cost_units, text_segments, rich_messages from summed
        on conflict (organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback)
        do update set messages = r.messages + excluded.messages, segments = r.segments + excluded.segments,
          cost_units = r.cost_units + excluded.cost_units, text_segments = r.text_segments + excluded.text_segments,
          rich_messages = r.rich_messages + excluded.rich_messages
        returning 1
      )
      select coalesce(sum(n), 0) into folded from summed;
      delete from analytics_message_rollups where messages = 0;
      return folded;
    end
    $fn$`.execute(db);

  await sql`
    create function analytics_rollup_trigger() returns trigger language plpgsql as $fn$
    begin
      if tg_op in ('UPDATE', 'DELETE') then perform analytics_rollup_apply(old, -1); end if;
      if tg_op in ('INSERT', 'UPDATE') then perform analytics_rollup_apply(new, 1); end if;
      return null;
    end
    $fn$`.execute(db);

  await sql`
    create trigger messages_analytics_rollup after insert or delete on messages
    for each row execute function analytics_rollup_trigger()`.execute(db);
  // Only the columns the rollup keys or sums on: other updates (receipts' timestamps, attempts …) cost nothing.
  await sql`
    create trigger messages_analytics_rollup_update after update on messages
    for each row when (
      (old.organization_id, old.created_at, old.sender_id, old.direction, old.requested_channel, old.channel,
       old.status, old.message_type, old.segments, old.cost_units)
      is distinct from
      (new.organization_id, new.created_at, new.sender_id, new.direction, new.requested_channel, new.channel,
       new.status, new.message_type, new.segments, new.cost_units))
    execute function analytics_rollup_trigger()`.execute(db);

  // Scheduled reports (at most 5 per organization, checked by the service under an advisory lock). A run writes the
  // report's files to the object store (last_run_at, last_run_key). When written, email delivery did not exist and
  // last_sent_at stayed null; it is set since reports are emailed (src/domain/analytics/report-runs.ts).
  await sql`
    create table analytics_reports (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references organizations (id) on delete cascade,
      name text not null check (length(name) between 1 and 100),
      frequency text not null check (frequency in ('weekly', 'monthly')),
      day_of_week integer check (day_of_week between 0 and 6),
      day_of_month integer check (day_of_month between 1 and 28),
      hour integer not null check (hour between 0 and 23),
      recipients jsonb not null,
      datasets jsonb not null,
      active boolean not null,
      next_run_at timestamptz,
      last_sent_at timestamptz,
      last_run_at timestamptz,
      last_run_key text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      check ((frequency = 'weekly' and day_of_week is not null and day_of_month is null)
          or (frequency = 'monthly' and day_of_month is not null and day_of_week is null))
    )`.execute(db);
  await sql`create index analytics_reports_org on analytics_reports (organization_id, created_at, id)`.execute(db);
  await sql`create index analytics_reports_due on analytics_reports (next_run_at) where active`.execute(db);

  // Backfill from the messages already stored (same keys as the trigger).
  await sql`
    insert into analytics_message_rollups (organization_id, bucket_hour, sender_id, direction, requested_channel,
      channel, status, message_type, is_fallback, messages, segments, cost_units, text_segments, rich_messages)
    select organization_id, date_trunc('hour', created_at at time zone 'UTC') at time zone 'UTC', sender_id, direction,
      coalesce(requested_channel, ''), coalesce(channel, ''), status, coalesce(message_type, ''),
      coalesce(requested_channel = 'RCS' and channel in ('SMS', 'MMS'), false),
      count(*), coalesce(sum(segments), 0), coalesce(sum(cost_units), 0),
      coalesce(sum(segments) filter (where cost_units is not null and cost_units = segments * 39), 0),
      count(*) filter (where cost_units = 150)
    from messages
    group by 1, 2, 3, 4, 5, 6, 7, 8, 9`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists analytics_reports`.execute(db);
  await sql`drop trigger if exists messages_analytics_rollup_update on messages`.execute(db);
  await sql`drop trigger if exists messages_analytics_rollup on messages`.execute(db);
  await sql`drop function if exists analytics_rollup_trigger()`.execute(db);
  await sql`drop function if exists analytics_rollup_apply(messages, integer)`.execute(db);
  await sql`drop function if exists analytics_rollup_compact()`.execute(db);
  await sql`drop table if exists analytics_message_deltas`.execute(db);
  await sql`drop table if exists analytics_message_rollups`.execute(db);
}
