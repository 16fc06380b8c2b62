// A message's attribution (program, brand registration, campaign registration: migration 0044) costs its send a
// plpgsql call no more (issue 38, bench part m1). 0044's BEFORE INSERT row trigger ran a plpgsql function and its
// SPI query for every message row: 68–71 µs per message in EXPLAIN ANALYZE of a direct send's accepting statement
// (its whole execution 0.65–1.2 ms), where the same query inlined in the statement takes 7 µs, once per statement;
// a blast batch of 5,000 recipients paid 5,000 calls.
//
// The attribution is now one SQL function, sender_attribution(organization, sender): the same query (the sender's
// ACTIVE attachment to a program that is not ARCHIVED, a non-TEST role first, then the latest attached). Outbound
// messages have one writer, the acceptance statement (src/db/queries/messages/accept.ts), which writes the three
// columns from it, inlined by the planner (once per statement for a set with one sender). The trigger stays for
// the rows the acceptance statement does not write: inbound messages (insertInboundMessage) and a message moved
// to its fallback sender (messages_attribute_moved, 0051); both call the same function.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function sender_attribution(organization uuid, sender uuid)
      returns table (program_id uuid, brand_registration_id uuid, campaign_registration_id uuid)
      language sql stable as $fn$
      select p.id, p.brand_registration_id, p.campaign_registration_id
      from program_senders ps join programs p on p.organization_id = ps.organization_id and p.id = ps.program_id
      where ps.organization_id = organization and ps.sender_id = sender and ps.status = 'ACTIVE' and p.status <> 'ARCHIVED'
      order by (ps.role = 'TEST'), ps.attached_at desc
      limit 1
    $fn$`.execute(db);
  await sql`
    create or replace function messages_attribute() returns trigger language plpgsql as $fn$
    begin
      select a.program_id, a.brand_registration_id, a.campaign_registration_id
        into new.program_id, new.brand_registration_id, new.campaign_registration_id
      from sender_attribution(new.organization_id, new.sender_id) a;
      return new;
    end
    $fn$`.execute(db);
  await sql`drop trigger messages_attribute on messages`.execute(db);
  await sql`create trigger messages_attribute before insert on messages for each row when (new.direction <> 'outbound')
    execute function messages_attribute()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger messages_attribute on messages`.execute(db);
  await sql`create trigger messages_attribute before insert on messages for each row execute function messages_attribute()`.execute(db);
  await sql`
    create or replace function messages_attribute() returns trigger language plpgsql as $fn$
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
  await sql`drop function sender_attribution(uuid, uuid)`.execute(db);
}
