// Sender IDs core (openapi/schemas/sender-ids.yaml `SenderId`): the columns the document describes, the lifecycle
// timestamps, and the sandbox sender reshaped to what the document allows (a LONG_CODE with its +1500… number,
// US, send-ready; RCS comes from the sandbox, see `SenderIdType`).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table sender_ids
      alter column provider drop not null,
      add column address text,
      add column country_code text,
      add column send_ready boolean,
      add column rcs_agent_phase text,
      add column number_id uuid,
      add column status_reason text,
      add column suspended_by text,
      add column activated_at timestamptz,
      add column suspended_at timestamptz,
      add column deactivated_at timestamptz`.execute(db);
  // Senders created before this migration were all ACTIVE, send-ready sandbox senders.
  await sql`
    update sender_ids set send_ready = true, activated_at = coalesce(activated_at, created_at)
    where status = 'ACTIVE'`.execute(db);
  await sql`update sender_ids set send_ready = false where send_ready is null`.execute(db);
  await sql`alter table sender_ids alter column send_ready set not null`.execute(db);
  // An insert that does not say (code written before this migration) keeps the meaning it had: an ACTIVE sender
  // sends. Everything written since says it explicitly.
  await sql`
    create function sender_ids_send_ready_default() returns trigger language plpgsql as $$
    begin
      if new.send_ready is null then new.send_ready := (new.status = 'ACTIVE'); end if;
      return new;
    end $$`.execute(db);
  await sql`
    create trigger sender_ids_send_ready_default before insert on sender_ids
    for each row execute function sender_ids_send_ready_default()`.execute(db);
  await sql`
    update sender_ids set type = 'LONG_CODE', country_code = 'US'
    where is_sandbox and type = 'RCS_AGENT' and phone_number is not null`.execute(db);
  await sql`
    update sender_ids set rcs_agent_phase = 'TESTING' where type = 'RCS_AGENT' and rcs_agent_phase is null`.execute(db);
  await sql`
    create index sender_ids_org_filters_idx on sender_ids (organization_id, status, type, created_at desc, id desc)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists sender_ids_send_ready_default on sender_ids`.execute(db);
  await sql`drop function if exists sender_ids_send_ready_default()`.execute(db);
  await sql`drop index if exists sender_ids_org_filters_idx`.execute(db);
  await sql`update sender_ids set type = 'RCS_AGENT' where is_sandbox and type = 'LONG_CODE'`.execute(db);
  await sql`update sender_ids set provider = 'PROVIDER_A' where provider is null`.execute(db);
  await sql`
    alter table sender_ids
      alter column provider set not null,
      drop column address,
      drop column country_code,
      drop column send_ready,
      drop column rcs_agent_phase,
      drop column number_id,
      drop column status_reason,
      drop column suspended_by,
      drop column activated_at,
      drop column suspended_at,
      drop column deactivated_at`.execute(db);
}
