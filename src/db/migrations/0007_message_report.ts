// Indexes for the message report (GET /v1/reports/messages) on millions of rows per organization: the sender
// filter, the receiptAt sort and the direction filter (kind=mo/mdr). createdAt order and the status filter use
// 0006's indexes. Every index slows message writes (receipts update indexed columns, so updates are never HOT:
// measured 1,470 → 970 message writes/s with one index per sort key), so the rarely used sorts by channel,
// actual channel and fallback reason have none: they sort the date window (about 0.5 s per 30 days at 2M
// messages a year) instead of taxing every send and receipt.
// `if not exists`: on a large live table an operator can build them first with CREATE INDEX CONCURRENTLY
// under these names (migrations run inside a transaction, where CONCURRENTLY is not allowed).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists messages_report_sender_idx on messages (organization_id, sender_id, created_at desc, id desc)`.execute(
    db,
  );
  // The same expression as RECEIPT_AT in src/db/queries/analytics/message-report.ts (inbound: the receive time).
  await sql`create index if not exists messages_report_receipt_idx on messages (organization_id, (case when direction = 'inbound' then created_at else receipt_at end) desc nulls last, id desc)`.execute(
    db,
  );
  await sql`create index if not exists messages_report_direction_idx on messages (organization_id, direction, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of ['messages_report_sender_idx', 'messages_report_receipt_idx', 'messages_report_direction_idx']) {
    await sql`drop index if exists ${sql.id(name)}`.execute(db);
  }
}
