// Every figure tells what happened (issue 34 items 1 and 2): a message records the blast it belongs to and the
// program, brand registration and campaign registration of its sender at the time it was stored, and the rollups
// carry those three as dimensions, so the analytics filters (brandId, campaignId) and the message report's columns
// and filters (programId, brand, campaign, blastId) read what the message recorded.
//
// - messages.blast_id: written by the acceptance statement of a blast batch (src/db/queries/messages/accept.ts);
//   backfilled here from blast_recipients.message_id.
// - messages.program_id, brand_registration_id, campaign_registration_id: set by a BEFORE INSERT trigger from the
//   sender's ACTIVE program attachment (program_senders; a non-TEST role first, then the latest attached), with
//   the program's brand and campaign registrations of that moment. Later program changes do not rewrite stored
//   messages. One writer for every origin (direct, blast, bot, event, acquisition, keyword reply, inbound): the
//   trigger, not each call site. Backfilled from the attachment that was active when each message was created
//   (attached_at/detached_at are kept as the audit trail).
// - The rollup levels (hourly, deltas, daily) key on the three as text ('' when none): a sender belongs to one
//   program at a time, so the number of rollup rows barely changes, and filtered figures stay sums of rollup rows.
//   The rollups are rebuilt from messages under the same locks as 0028.
// - The rollups also key on `handed` (messages.sent_at is not null: a carrier took the message), so `sent` means one
//   thing in every figure — handed to a carrier — and a message accepted but held for quiet hours, queued or
//   refused before any carrier took it is not sent (AnalyticsMessageMetrics defines each term).
import { sql, type Kysely } from 'kysely';

const DIMS = 'program_id, brand_id, campaign_id, handed';

/** 0029's summed deltas of a statement's message versions, with the attribution dimensions. */
const summedDeltas = (rows: string) => `
  insert into analytics_message_deltas (organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status,
    message_type, is_fallback, ${DIMS}, messages, segments, cost_units, text_segments, rich_messages, sessions)
  select organization_id, date_trunc('hour', created_at at time zone 'UTC') at time zone 'UTC', sender_id, direction,
    coalesce(requested_channel, ''), coalesce(channel, ''), status, coalesce(message_type, ''),
    coalesce(requested_channel = 'RCS' and channel in ('SMS', 'MMS'), false),
    coalesce(program_id::text, ''), coalesce(brand_registration_id::text, ''), coalesce(campaign_registration_id::text, ''),
    sent_at is not null,
    sum(sign), sum(sign * coalesce(segments, 0)), sum(sign * coalesce(cost_units, 0)),
    sum(sign * (case when cost_units is not null and cost_units = segments * 39 then segments else 0 end)),
    sum(sign * (case when cost_units = 150 then 1 else 0 end)),
    sum(sign * (case when opens_session then 1 else 0 end))
  from (${rows}) m
  group by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
  having (sum(sign), sum(sign * coalesce(segments, 0)), sum(sign * coalesce(cost_units, 0)),
    sum(sign * (case when cost_units is not null and cost_units = segments * 39 then segments else 0 end)),
    sum(sign * (case when cost_units = 150 then 1 else 0 end)), sum(sign * (case when opens_session then 1 else 0 end))) <> (0, 0, 0, 0, 0, 0)`;

const STATEMENT_TRIGGERS = [
  { fn: 'analytics_rollup_inserted', rows: 'select n.*, 1 as sign from new_rows n' },
  { fn: 'analytics_rollup_deleted', rows: 'select o.*, -1 as sign from old_rows o' },
  { fn: 'analytics_rollup_updated', rows: 'select o.*, -1 as sign from old_rows o union all select n.*, 1 from new_rows n' },
] as const;

/** The hourly rollup of the messages matching `scope` (0028's backfill plus this migration's dimensions; bench r uses it). */
export const hourlyRollupBackfillSql = (scope: string) => `
  insert into analytics_message_rollups (organization_id, bucket_hour, sender_id, direction, requested_channel,
    channel, status, message_type, is_fallback, ${DIMS}, messages, segments, cost_units, text_segments, rich_messages, sessions)
  select organization_id, date_trunc('hour', created_at at time zone 'UTC') at time zone 'UTC', sender_id, direction,
    coalesce(requested_channel, ''), coalesce(channel, ''), status, coalesce(message_type, ''),
    coalesce(requested_channel = 'RCS' and channel in ('SMS', 'MMS'), false),
    coalesce(program_id::text, ''), coalesce(brand_registration_id::text, ''), coalesce(campaign_registration_id::text, ''),
    sent_at is not null,
    count(*), coalesce(sum(segments), 0), coalesce(sum(cost_units), 0),
    coalesce(sum(segments) filter (where cost_units is not null and cost_units = segments * 39), 0),
    count(*) filter (where cost_units = 150), count(*) filter (where opens_session)
  from messages where (${scope})
  group by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13`;

export const dailyRollupBackfillSql = (scope: string) => `
  insert into analytics_message_rollups_daily (organization_id, bucket_day, sender_id, direction, channel, status,
    is_fallback, ${DIMS}, messages, segments, cost_units, text_segments, rich_messages, sessions)
  select organization_id, date_trunc('day', bucket_hour at time zone 'UTC') at time zone 'UTC', sender_id, direction,
    coalesce(nullif(channel, ''), requested_channel), status, is_fallback, ${DIMS}, sum(messages), sum(segments),
    sum(cost_units), sum(text_segments), sum(rich_messages), sum(sessions)
  from analytics_message_rollups where (${scope})
  group by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11`;

export async function up(db: Kysely<unknown>): Promise<void> {
  // As 0028: writers wait while the trigger functions change, no compaction runs, the rollup is rebuilt below.
  await sql`lock table messages in share row exclusive mode`.execute(db);
  await sql`select pg_advisory_xact_lock(hashtext('analytics_rollup_compact'))`.execute(db);

  // Nullable, no default: PostgreSQL adds the columns without rewriting the table.
  await sql`alter table messages add column blast_id uuid, add column program_id uuid,
    add column brand_registration_id uuid, add column campaign_registration_id uuid`.execute(db);

  await sql`update messages m set blast_id = br.blast_id from blast_recipients br
    where br.organization_id = m.organization_id and br.message_id = m.id`.execute(db);
  await sql`update messages m set program_id = a.program_id, brand_registration_id = a.brand_registration_id,
      campaign_registration_id = a.campaign_registration_id
    from (
      select distinct on (m2.id) m2.id, p.id as program_id, p.brand_registration_id, p.campaign_registration_id
      from messages m2
      join program_senders ps on ps.organization_id = m2.organization_id and ps.sender_id = m2.sender_id
        and ps.attached_at <= m2.created_at and (ps.detached_at is null or ps.detached_at > m2.created_at)
      join programs p on p.organization_id = ps.organization_id and p.id = ps.program_id
      order by m2.id, (ps.role = 'TEST'), ps.attached_at desc
    ) a where a.id = m.id`.execute(db);

  // The sender's program now: its ACTIVE attachment to a program that is not archived.
  await sql`create index if not exists program_senders_sender_active on program_senders (organization_id, sender_id) where status = 'ACTIVE'`.execute(
    db,
  );
  await sql`
    create function messages_attribute() returns trigger language plpgsql as $fn$
    begin
      select p.id, p.brand_registration_id, p.campaign_registration_id
        into new.program_id, new.brand_registration_id, new.campaign_registration_id
      from program_senders ps join programs p on p.organization_id = ps.organization_id and p.id = ps.program_id
      where ps.organization_id = new.organization_id and ps.sender_id = new.sender_id and ps.status = 'ACTIVE' and p.status <> 'ARCHIVED'
      order by (ps.role = 'TEST'), ps.attached_at desc
      limit 1;
      return new;
    end
    $fn$`.execute(db);
  await sql`create trigger messages_attribute before insert on messages for each row execute function messages_attribute()`.execute(db);

  for (const t of ['analytics_message_rollups', 'analytics_message_deltas', 'analytics_message_rollups_daily']) {
    await sql`alter table ${sql.table(t)} add column program_id text not null default '', add column brand_id text not null default '',
      add column campaign_id text not null default '', add column handed boolean not null default false`.execute(db);
  }
  await sql`alter table analytics_message_rollups drop constraint analytics_message_rollups_pkey,
    add primary key (organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback, program_id, brand_id, campaign_id, handed)`.execute(
    db,
  );
  await sql`alter table analytics_message_rollups_daily drop constraint analytics_message_rollups_daily_pkey,
    add primary key (organization_id, bucket_day, sender_id, direction, channel, status, is_fallback, program_id, brand_id, campaign_id, handed)`.execute(
    db,
  );

  // 0029's statement triggers, their deltas keyed on the three dimensions too (same sums, same signs).
  for (const t of STATEMENT_TRIGGERS) {
    await sql`
      create or replace function ${sql.id(t.fn)}() returns trigger language plpgsql as $fn$
      begin
        ${sql.raw(summedDeltas(t.rows))};
        return null;
      end
      $fn$`.execute(db);
  }

  // As 0028's, with the three dimensions in every key.
  await sql`
    create or replace function analytics_rollup_compact() returns bigint language plpgsql as $fn$
    declare folded bigint;
    begin
      perform pg_advisory_xact_lock(hashtext('analytics_rollup_compact'));
      with moved as (delete from analytics_message_deltas returning *),
      summed as (
        select organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback, program_id, brand_id, campaign_id, handed,
          sum(messages) as messages, sum(segments) as segments, sum(cost_units) as cost_units,
          sum(text_segments) as text_segments, sum(rich_messages) as rich_messages, sum(sessions) as sessions, count(*) as n
        from moved group by organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback, program_id, brand_id, campaign_id, handed
      ),
      upserted as (
        insert into analytics_message_rollups as r (organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback, program_id, brand_id, campaign_id, handed, messages, segments, cost_units, text_segments, rich_messages, sessions)
        select organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback, program_id, brand_id, campaign_id, handed, messages, segments, cost_units, text_segments, rich_messages, sessions from summed
        on conflict (organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback, program_id, brand_id, campaign_id, handed)
        do update set messages = r.messages + excluded.messages, segments = r.segments + excluded.segments,
          cost_units = r.cost_units + excluded.cost_units, text_segments = r.text_segments + excluded.text_segments,
          rich_messages = r.rich_messages + excluded.rich_messages, sessions = r.sessions + excluded.sessions
        returning 1
      ),
      daily as (
        insert into analytics_message_rollups_daily as d (organization_id, bucket_day, sender_id, direction, channel, status, is_fallback, program_id, brand_id, campaign_id, handed, messages, segments, cost_units, text_segments, rich_messages, sessions)
        select organization_id, date_trunc('day', bucket_hour at time zone 'UTC') at time zone 'UTC', sender_id, direction,
          coalesce(nullif(channel, ''), requested_channel), status, is_fallback, program_id, brand_id, campaign_id, handed, sum(messages), sum(segments), sum(cost_units),
          sum(text_segments), sum(rich_messages), sum(sessions)
        from summed group by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
        on conflict (organization_id, bucket_day, sender_id, direction, channel, status, is_fallback, program_id, brand_id, campaign_id, handed)
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

  // Both levels rebuilt from the messages table (the pending deltas are in it).
  await sql`delete from analytics_message_deltas`.execute(db);
  await sql`delete from analytics_message_rollups`.execute(db);
  await sql`delete from analytics_message_rollups_daily`.execute(db);
  await sql.raw(hourlyRollupBackfillSql('true')).execute(db);
  await sql.raw(dailyRollupBackfillSql('true')).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists messages_attribute on messages`.execute(db);
  await sql`drop function if exists messages_attribute()`.execute(db);
  // The rollup functions read the new columns: a down past this migration re-creates 0028's and 0029's functions.
}
