// Cheaper bulk writes to messages (issue 10: a 1,000,000-recipient blast).
//
// Time-ordered message ids. A random (v4) uuid puts every new message at a random leaf of the primary key and of
// the indexes ending in id, so a big batch touches pages all over them; a time-ordered (v7) uuid appends at their
// right edge. Measured with a plain INSERT … SELECT of 1,000,000 message rows: 44.6 s with v4 ids, 18.4 s with v7.
// time_ordered_uuid() is PostgreSQL 18's uuidv7() when the server has it, else the same layout built in SQL
// (48-bit Unix milliseconds, version 7, variant bits, random rest) for older servers given through DATABASE_URL.
// Contacts get them too: imports write 150,000 at once.
//
// Rollup triggers per statement, not per row. 0022/0028 appended one delta row per
// message written (two per update), from a plpgsql call per row: a blast batch of 5,000 messages paid 5,000
// inserts into analytics_message_deltas, and every dispatch batch's status change twice that. Now each INSERT,
// UPDATE or DELETE on messages appends its change summed per rollup key, read from the statement's transition
// tables: a 5,000-message batch adds a handful of delta rows. The sums are the same (−1 × the old version, +1 ×
// the new one, of every row whose rollup keys or sums changed), so rollup + deltas still equal the messages table.
import { sql, type Kysely } from 'kysely';

/** A version-7 uuid in plain SQL, for servers before PostgreSQL 18 (a v4 uuid with its first 48 bits the time). */
export const UUID_V7_SQL = `encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) placing
  substring(int8send(floor(extract(epoch from clock_timestamp()) * 1000)::bigint) from 3) from 1 for 6), 52, 1), 53, 1), 'hex')::uuid`;

/** The signed delta rows of a set of message versions `rows` (with a `sign` column), summed per rollup key. */
const summedDeltas = (rows: string) => `
  insert into analytics_message_deltas (organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status,
    message_type, is_fallback, messages, segments, cost_units, text_segments, rich_messages, sessions)
  select organization_id, date_trunc('hour', created_at at time zone 'UTC') at time zone 'UTC', sender_id, direction,
    coalesce(requested_channel, ''), coalesce(channel, ''), status, coalesce(message_type, ''),
    coalesce(requested_channel = 'RCS' and channel in ('SMS', 'MMS'), false),
    sum(sign), sum(sign * coalesce(segments, 0)), sum(sign * coalesce(cost_units, 0)),
    sum(sign * (case when cost_units is not null and cost_units = segments * 39 then segments else 0 end)),
    sum(sign * (case when cost_units = 150 then 1 else 0 end)),
    sum(sign * (case when opens_session then 1 else 0 end))
  from (${rows}) m
  group by 1, 2, 3, 4, 5, 6, 7, 8, 9
  having (sum(sign), sum(sign * coalesce(segments, 0)), sum(sign * coalesce(cost_units, 0)),
    sum(sign * (case when cost_units is not null and cost_units = segments * 39 then segments else 0 end)),
    sum(sign * (case when cost_units = 150 then 1 else 0 end)), sum(sign * (case when opens_session then 1 else 0 end))) <> (0, 0, 0, 0, 0, 0)`;

/** The columns the rollup keys or sums on, which 0028's row trigger watched (restored by down). */
const KEYS =
  'organization_id, created_at, sender_id, direction, requested_channel, channel, status, message_type, segments, cost_units, opens_session';
const keysOf = (alias: string) =>
  `(${KEYS.split(', ')
    .map((c) => `${alias}.${c}`)
    .join(', ')})`;

/**
 * The three statement triggers: each appends the summed deltas of its statement's rows. An update adds −1 × every
 * old version and +1 × every new one: a row whose rollup columns did not change cancels out in its group (and
 * all-zero groups are not written), so no pairing of old and new rows is needed — a join of two transition tables,
 * which have no statistics, could be planned as a nested loop over a large update (a blast's cancel).
 */
const STATEMENT_TRIGGERS = [
  {
    trigger: 'messages_analytics_rollup_insert',
    fn: 'analytics_rollup_inserted',
    on: 'insert',
    referencing: 'new table as new_rows',
    rows: 'select n.*, 1 as sign from new_rows n',
  },
  {
    trigger: 'messages_analytics_rollup_delete',
    fn: 'analytics_rollup_deleted',
    on: 'delete',
    referencing: 'old table as old_rows',
    rows: 'select o.*, -1 as sign from old_rows o',
  },
  {
    trigger: 'messages_analytics_rollup_update',
    fn: 'analytics_rollup_updated',
    on: 'update',
    referencing: 'old table as old_rows new table as new_rows',
    rows: 'select o.*, -1 as sign from old_rows o union all select n.*, 1 from new_rows n',
  },
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  const native = (
    await sql<{ yes: boolean }>`select exists (select 1 from pg_proc where proname = 'uuidv7' and pronargs = 0) as yes`.execute(db)
  ).rows[0]!.yes;
  await sql`
    create function time_ordered_uuid() returns uuid language sql volatile parallel safe as $fn$
      ${sql.raw(native ? 'select uuidv7()' : `select ${UUID_V7_SQL}`)}
    $fn$`.execute(db);
  await sql`alter table messages alter column id set default time_ordered_uuid()`.execute(db);
  await sql`alter table contacts alter column id set default time_ordered_uuid()`.execute(db);

  for (const t of STATEMENT_TRIGGERS) {
    await sql`
      create function ${sql.id(t.fn)}() returns trigger language plpgsql as $fn$
      begin
        ${sql.raw(summedDeltas(t.rows))};
        return null;
      end
      $fn$`.execute(db);
  }
  await sql`drop trigger messages_analytics_rollup on messages`.execute(db);
  await sql`drop trigger messages_analytics_rollup_update on messages`.execute(db);
  for (const t of STATEMENT_TRIGGERS) {
    await sql`create trigger ${sql.id(t.trigger)} after ${sql.raw(t.on)} on messages referencing ${sql.raw(t.referencing)}
      for each statement execute function ${sql.id(t.fn)}()`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table messages alter column id set default gen_random_uuid()`.execute(db);
  await sql`alter table contacts alter column id set default gen_random_uuid()`.execute(db);
  await sql`drop function if exists time_ordered_uuid()`.execute(db);
  for (const t of STATEMENT_TRIGGERS) {
    await sql`drop trigger if exists ${sql.id(t.trigger)} on messages`.execute(db);
    await sql`drop function if exists ${sql.id(t.fn)}()`.execute(db);
  }
  await sql`create trigger messages_analytics_rollup after insert or delete on messages
    for each row execute function analytics_rollup_trigger()`.execute(db);
  await sql`
    create trigger messages_analytics_rollup_update after update on messages
    for each row when (${sql.raw(keysOf('old'))} is distinct from ${sql.raw(keysOf('new'))})
    execute function analytics_rollup_trigger()`.execute(db);
}
