// An RCS agent is written to at its agent id (RBM's agentId, the sender's `address`), and an inbound message names
// only that id: the callback route finds the organization by it (senderByPhoneNumber). Two organizations' agents
// with one id would send one organization's replies to the other, so the id is unique across organizations, as a
// number is (sender_ids_phone_key). No API call sets an agent's address (the provider assigns it); a database that
// already holds a duplicate stops the migration with the ids to fix rather than picking one.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const duplicates = (
    await sql<{ address: string }>`
      select address from sender_ids where type = 'RCS_AGENT' and address is not null group by address having count(*) > 1`.execute(db)
  ).rows;
  if (duplicates.length) {
    throw new Error(
      `RCS agent ids shared by several senders (inbound replies could reach the wrong organization): ${duplicates
        .map((d) => d.address)
        .join(', ')}; give each sender its own agent id, then start again`,
    );
  }
  await sql`create unique index sender_ids_rcs_agent_key on sender_ids (address) where type = 'RCS_AGENT' and address is not null`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists sender_ids_rcs_agent_key`.execute(db);
}
