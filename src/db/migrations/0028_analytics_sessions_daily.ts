// Analytics at scale (issue 15): sessions as a recorded fact, and a daily rollup level.
//
// Sessions. A session is a conversation's 24-hour window opened by an inbound message: an inbound message opens one
// when no inbound message of its conversation precedes it — in (created_at, id) order, the order of
// src/db/queries/analytics/sessions.ts — within the 24 hours before it (a gap of exactly 24 hours continues the
// session, as conversations.session_started_at does). messages.opens_session records it. Triggers keep it exact
// whatever the writer and whatever the order of arrival (carriers deliver late): a new inbound message is marked
// when stored, and the inbound messages of the 24 hours after it (or after a deleted or moved one) are re-marked.
// The marks of one conversation are computed under a per-conversation advisory lock, so two concurrent inbound
// messages of a conversation are marked one after the other, the second seeing the first. The rollup counts the
// marks (`sessions`), so a session count over any range is a sum of rollup rows.
//
// Daily level. analytics_message_rollups_daily holds the hourly rollup summed per UTC day, on the keys the
// figures read (sender, direction, carrying channel — the actual one, else the requested one — status, fallback
// flag). analytics_rollup_compact() folds each batch of deltas into both levels in one statement, so the daily
// level always equals the hourly one summed; day-aligned ranges read it (plus the pending deltas) instead of 24×
// as many hourly rows.
import { sql, type Kysely } from 'kysely';

/** Marks the inbound messages that open a session among those matching `scope` (SQL over messages). */
export const markSessionOpenersSql = (scope: string) => `
  update messages m set opens_session = true
  from (
    select id, created_at - lag(created_at) over (partition by conversation_id order by created_at, id) as gap
    from messages where direction = 'inbound' and (${scope})
  ) s
  where m.id = s.id and (s.gap is null or s.gap > interval '24 hours') and not m.opens_session`;

/** The hourly rollup of the messages matching `scope` (the backfill of 0022 plus the session marks). */
export const hourlyRollupBackfillSql = (scope: string) => `
  insert into analytics_message_rollups (organization_id, bucket_hour, sender_id, direction, requested_channel,
    channel, status, message_type, is_fallback, messages, segments, cost_units, text_segments, rich_messages, sessions)
  select organization_id, date_trunc('hour', created_at at time zone 'UTC') at time zone 'UTC', sender_id, direction,
    coalesce(requested_channel, ''), coalesce(channel, ''), status, coalesce(message_type, ''),
    coalesce(requested_channel = 'RCS' and channel in ('SMS', 'MMS'), false),
    count(*), coalesce(sum(segments), 0), coalesce(sum(cost_units), 0),
    coalesce(sum(segments) filter (where cost_units is not null and cost_units = segments * 39), 0),
    count(*) filter (where cost_units = 150), count(*) filter (where opens_session)
  from messages where (${scope})
  group by 1, 2, 3, 4, 5, 6, 7, 8, 9`;

/** The daily level of the hourly rollup rows matching `scope` (SQL over analytics_message_rollups). */
export const dailyRollupBackfillSql = (scope: string) => `
  insert into analytics_message_rollups_daily (organization_id, bucket_day, sender_id, direction, channel, status,
    is_fallback, messages, segments, cost_units, text_segments, rich_messages, sessions)
  select organization_id, date_trunc('day', bucket_hour at time zone 'UTC') at time zone 'UTC', sender_id, direction,
    coalesce(nullif(channel, ''), requested_channel), status, is_fallback, sum(messages), sum(segments),
    sum(cost_units), sum(text_segments), sum(rich_messages), sum(sessions)
  from analytics_message_rollups where (${scope})
  group by 1, 2, 3, 4, 5, 6, 7`;

export async function up(db: Kysely<unknown>): Promise<void> {
  // Writers wait (the trigger functions change under them) and no compaction runs meanwhile: the rollup is rebuilt
  // from the messages table below, which then is the whole truth (no delta of a writer in flight).
  await sql`lock table messages in share row exclusive mode`.execute(db);
  await sql`select pg_advisory_xact_lock(hashtext('analytics_rollup_compact'))`.execute(db);

  await sql`alter table messages add column opens_session boolean not null default false`.execute(db);
  await sql`alter table analytics_message_rollups add column sessions bigint not null default 0`.execute(db);
  await sql`alter table analytics_message_deltas add column sessions bigint not null default 0`.execute(db);
  await sql`
    create table analytics_message_rollups_daily (
      organization_id uuid not null references organizations (id) on delete cascade,
      bucket_day timestamptz not null,
      sender_id uuid not null,
      direction text not null,
      channel text not null,
      status text not null,
      is_fallback boolean not null,
      messages bigint not null,
      segments bigint not null,
      cost_units bigint not null,
      text_segments bigint not null,
      rich_messages bigint not null,
      sessions bigint not null,
      primary key (organization_id, bucket_day, sender_id, direction, channel, status, is_fallback)
    )`.execute(db);
  // Marked before the update trigger watches opens_session (the rollup is rebuilt below anyway).
  await sql.raw(markSessionOpenersSql('true')).execute(db);

  await sql`
    create or replace function analytics_rollup_apply(m messages, sign integer) returns void language plpgsql as $fn$
    begin
      insert into analytics_message_deltas (organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback, messages, segments, cost_units, text_segments, rich_messages, sessions)
      values (m.organization_id, date_trunc('hour', m.created_at at time zone 'UTC') at time zone 'UTC', m.sender_id,
        m.direction, coalesce(m.requested_channel, ''), coalesce(m.channel, ''), m.status, coalesce(m.message_type, ''),
        coalesce(m.requested_channel = 'RCS' and m.channel in ('SMS', 'MMS'), false),
        sign, sign * coalesce(m.segments, 0), sign * coalesce(m.cost_units, 0),
        sign * (case when m.cost_units is not null and m.cost_units = m.segments * 39 then m.segments else 0 end),
        sign * (case when m.cost_units = 150 then 1 else 0 end),
        sign * (case when m.opens_session then 1 else 0 end));
    end
    $fn$`.execute(db);

  // As 0022's, and the same batch summed per day into the daily level (both upserts commit with the delete).
  await sql`
    create or replace function analytics_rollup_compact() returns bigint language plpgsql as $fn$
    declare folded bigint;
    begin
      perform pg_advisory_xact_lock(hashtext('analytics_rollup_compact'));
      with moved as (delete from analytics_message_deltas returning *),
      summed as (
        select organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback, sum(messages) as messages, sum(segments) as segments, sum(cost_units) as cost_units,
          sum(text_segments) as text_segments, sum(rich_messages) as rich_messages, sum(sessions) as sessions, count(*) as n
        from moved group by organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback
      ),
      upserted as (
        insert into analytics_message_rollups as r (organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback, messages, segments, cost_units, text_segments, rich_messages, sessions)
        select organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback, messages, segments, cost_units, text_segments, rich_messages, sessions from summed
        on conflict (organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback)
        do update set messages = r.messages + excluded.messages, segments = r.segments + excluded.segments,
          cost_units = r.cost_units + excluded.cost_units, text_segments = r.text_segments + excluded.text_segments,
          rich_messages = r.rich_messages + excluded.rich_messages, sessions = r.sessions + excluded.sessions
        returning 1
      ),
      daily as (
        insert into analytics_message_rollups_daily as d (organization_id, bucket_day, sender_id, direction, channel, status, is_fallback, messages, segments, cost_units, text_segments, rich_messages, sessions)
        select organization_id, date_trunc('day', bucket_hour at time zone 'UTC') at time zone 'UTC', sender_id, direction,
          coalesce(nullif(channel, ''), requested_channel), status, is_fallback, sum(messages), sum(segments), sum(cost_units),
          sum(text_segments), sum(rich_messages), sum(sessions)
        from summed group by 1, 2, 3, 4, 5, 6, 7
        on conflict (organization_id, bucket_day, sender_id, direction, channel, status, is_fallback)
        do update set messages = d.messages + excluded.messages, segments = d.segments + excluded.segments,
          cost_units = d.cost_units + excluded.cost_units, text_segments = d.text_segments + excluded.text_segments,
          rich_messages = d.rich_messages + excluded.rich_messages, sessions = d.sessions + excluded.sessions
        returning 1
      )
      select coalesce(sum(n), 0) into folded from summed;
      delete from analytics_message_rollups where messages = 0;
      delete from analytics_message_rollups_daily where messages = 0;
      return folded;
    end
    $fn$`.execute(db);

  // A flip of opens_session is a rollup change like a status change.
  await sql`drop trigger messages_analytics_rollup_update on messages`.execute(db);
  await sql`
    create trigger messages_analytics_rollup_update after update on messages
    for each row when (
      (old.organization_id, old.created_at, old.sender_id, old.direction, old.requested_channel, old.channel,
       old.status, old.message_type, old.segments, old.cost_units, old.opens_session)
      is distinct from
      (new.organization_id, new.created_at, new.sender_id, new.direction, new.requested_channel, new.channel,
       new.status, new.message_type, new.segments, new.cost_units, new.opens_session))
    execute function analytics_rollup_trigger()`.execute(db);

  // Whether an inbound message opens a session: no inbound message of its conversation before it (created_at, id)
  // in the 24 hours before it. Uses messages_conversation_idx (organization_id, conversation_id, created_at, id).
  await sql`
    create function messages_opens_session(m messages) returns boolean language sql stable as $fn$
      select not exists (
        select 1 from messages p
        where p.organization_id = m.organization_id and p.conversation_id = m.conversation_id and p.direction = 'inbound'
          and p.id <> m.id and p.created_at >= m.created_at - interval '24 hours' and (p.created_at, p.id) < (m.created_at, m.id))
    $fn$`.execute(db);

  // Re-marks the inbound messages of a conversation after the position (at, id) and within 24 hours of it.
  await sql`
    create function messages_remark_sessions(org uuid, conversation uuid, at timestamptz, after_id uuid) returns void language plpgsql as $fn$
    begin
      update messages n set opens_session = messages_opens_session(n)
      where n.organization_id = org and n.conversation_id = conversation and n.direction = 'inbound'
        and n.created_at <= at + interval '24 hours' and (n.created_at, n.id) > (at, after_id)
        and n.opens_session is distinct from messages_opens_session(n);
    end
    $fn$`.execute(db);

  await sql`
    create function messages_session_lock(conversation uuid) returns void language sql as $fn$
      select pg_advisory_xact_lock(hashtextextended('messages_session:' || conversation::text, 0))
    $fn$`.execute(db);

  await sql`
    create function messages_session_mark() returns trigger language plpgsql as $fn$
    begin
      if new.direction = 'inbound' then
        perform messages_session_lock(new.conversation_id);
        new.opens_session := messages_opens_session(new);
      else
        new.opens_session := false;
      end if;
      return new;
    end
    $fn$`.execute(db);

  await sql`
    create function messages_session_followers() returns trigger language plpgsql as $fn$
    begin
      if tg_op in ('UPDATE', 'DELETE') and old.direction = 'inbound' then
        perform messages_session_lock(old.conversation_id);
        perform messages_remark_sessions(old.organization_id, old.conversation_id, old.created_at, old.id);
      end if;
      if tg_op in ('INSERT', 'UPDATE') and new.direction = 'inbound' then
        perform messages_session_lock(new.conversation_id);
        perform messages_remark_sessions(new.organization_id, new.conversation_id, new.created_at, new.id);
      end if;
      return null;
    end
    $fn$`.execute(db);

  // Only inbound messages (or one that was marked) fire them: outbound writes — blasts, receipts — pay nothing.
  await sql`
    create trigger messages_session_mark before insert or update of organization_id, conversation_id, direction, created_at on messages
    for each row when (new.direction = 'inbound' or new.opens_session) execute function messages_session_mark()`.execute(db);
  await sql`
    create trigger messages_session_followers_insert after insert on messages
    for each row when (new.direction = 'inbound') execute function messages_session_followers()`.execute(db);
  await sql`
    create trigger messages_session_followers_update after update of organization_id, conversation_id, direction, created_at on messages
    for each row when (old.direction = 'inbound' or new.direction = 'inbound') execute function messages_session_followers()`.execute(db);
  await sql`
    create trigger messages_session_followers_delete after delete on messages
    for each row when (old.direction = 'inbound') execute function messages_session_followers()`.execute(db);

  // Backfill: both rollup levels rebuilt from the messages table (the pending deltas are in it) and its marks.
  await sql`delete from analytics_message_deltas`.execute(db);
  await sql`delete from analytics_message_rollups`.execute(db);
  await sql.raw(hourlyRollupBackfillSql('true')).execute(db);
  await sql.raw(dailyRollupBackfillSql('true')).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['messages_session_followers_insert', 'messages_session_followers_update', 'messages_session_followers_delete']) {
    await sql`drop trigger if exists ${sql.id(t)} on messages`.execute(db);
  }
  await sql`drop trigger if exists messages_session_mark on messages`.execute(db);
  await sql`drop function if exists messages_session_followers()`.execute(db);
  await sql`drop function if exists messages_session_mark()`.execute(db);
  await sql`drop function if exists messages_session_lock(uuid)`.execute(db);
  await sql`drop function if exists messages_remark_sessions(uuid, uuid, timestamptz, uuid)`.execute(db);
  await sql`drop function if exists messages_opens_session(messages)`.execute(db);
  await sql`drop table if exists analytics_message_rollups_daily`.execute(db);
  // 0022's trigger functions now read the session columns: they stay (harmless) until 0022's own down drops them.
}
