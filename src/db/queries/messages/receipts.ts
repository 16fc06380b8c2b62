// SQL of delivery receipts. A carrier's batch may hold messages of several organizations: the messages are found
// and locked by id with the system handle, and written back by id in one statement.
import { sql } from 'kysely';
import type { Db } from '../../database.ts';
import type { MessageRow } from './messages.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// System handle: delivery receipts arrive for the messages of every organization.
/** Locks the messages for the caller's transaction, in id order (concurrent batches cannot deadlock). */
export async function lockMessages(db: Db, ids: readonly string[]): Promise<MessageRow[]> {
  const valid = [...new Set(ids.filter((id) => UUID.test(id)))]; // a malformed reference matches no message
  if (!valid.length) return [];
  return (await sql<MessageRow>`select * from messages where id = any(${valid}::uuid[]) order by id for update`.execute(db)).rows;
}

/** The state a batch of receipts leaves a message in: the columns receipts change. `requeue`: due for dispatch now. */
export type ReceiptState = Pick<
  MessageRow,
  | 'id'
  | 'status'
  | 'channel'
  | 'planned_channel'
  | 'provider'
  | 'provider_message_id'
  | 'sent_at'
  | 'cost_units'
  | 'delivered_at'
  | 'read_at'
  | 'failed_at'
  | 'error_code'
  | 'error_message'
  | 'receipt_at'
  | 'fallback_used'
  | 'fallback_reason'
> & { requeue: boolean };

// System handle: delivery receipts arrive for the messages of every organization.
/** Writes the receipts' states, one statement for the whole batch. */
export async function writeReceiptStates(db: Db, states: readonly ReceiptState[]): Promise<void> {
  if (!states.length) return;
  const col = <T>(f: (s: ReceiptState) => T) => states.map(f);
  await sql`
    update messages m set
      status = v.status, channel = v.channel, planned_channel = v.planned_channel, provider = v.provider,
      provider_message_id = v.provider_message_id, sent_at = v.sent_at, cost_units = v.cost_units,
      delivered_at = v.delivered_at, read_at = v.read_at, failed_at = v.failed_at, error_code = v.error_code,
      error_message = v.error_message, receipt_at = v.receipt_at, fallback_used = v.fallback_used,
      fallback_reason = v.fallback_reason, dispatch_at = case when v.requeue then now() else m.dispatch_at end, updated_at = now()
    from unnest(${col((s) => s.id)}::uuid[], ${col((s) => s.status)}::text[], ${col((s) => s.channel)}::text[], ${col((s) => s.planned_channel)}::text[],
      ${col((s) => s.provider)}::text[], ${col((s) => s.provider_message_id)}::text[], ${col((s) => s.sent_at)}::timestamptz[], ${col((s) => s.cost_units)}::int[],
      ${col((s) => s.delivered_at)}::timestamptz[], ${col((s) => s.read_at)}::timestamptz[], ${col((s) => s.failed_at)}::timestamptz[], ${col((s) => s.error_code)}::text[],
      ${col((s) => s.error_message)}::text[], ${col((s) => s.receipt_at)}::timestamptz[], ${col((s) => s.fallback_used)}::bool[], ${col((s) => s.fallback_reason)}::text[],
      ${col((s) => s.requeue)}::bool[])
      as v(id, status, channel, planned_channel, provider, provider_message_id, sent_at, cost_units, delivered_at, read_at, failed_at, error_code,
           error_message, receipt_at, fallback_used, fallback_reason, requeue)
    where m.id = v.id`.execute(db);
}
