// The carrier simulator keeps when it reported a message's final status (its delivered or failed receipt) to the
// service: from then on the message has reached the handset (or failed) and a revoke is too late, as it is at a real
// carrier. Before, the simulator's revoke succeeded for any RCS message it had accepted, so the service's
// 409 "The carrier has already delivered this message" could not be reached in the sandbox.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table simulator_messages add column reported_at timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table simulator_messages drop column reported_at`.execute(db);
}
