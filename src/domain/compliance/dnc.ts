// The Do-Not-Contact list: one entry per phone per organization. Adding is idempotent (an entry is never
// replaced); a batch checks each phone on its own and reports every item in request order.
import { inTransaction } from '../../db/database.ts';
import type { Page } from '../../db/paging.ts';
import * as q from '../../db/queries/compliance/dnc.ts';
import { found, invalidField } from '../errors.ts';
import { parsePhone } from '../phone.ts';
import { queueOf } from '../messaging/context.ts';
import { failUnsentAfter } from '../messaging/refusals.ts';
import type { Services, Tenant } from '../tenant.ts';

export type DncEntryRow = q.DncEntryRow;

type DncBatchStatus = 'added' | 'already_listed' | 'invalid' | 'duplicate_in_request';
export type DncBatchItem = { phone: string; status: DncBatchStatus; id: string | null };

/** What the batch accepts: E.164 as written (`+`, country code, digits only), and valid for its country. */
const E164 = /^\+[1-9][0-9]{6,14}$/;

/** A page of the organization's entries, newest first; `search` is a substring of the phone. */
export function listDncEntries(tenant: Tenant, page: { limit: number; offset: number }, search?: string): Promise<Page<DncEntryRow>> {
  return q.listDncEntries(tenant.db, tenant.organizationId, page, search);
}

/**
 * Lists the phone (400 INVALID_PHONE when it is not a valid number); an existing entry is answered unchanged. A new
 * entry fails, in the same transaction, the phone's messages accepted and not yet sent (refusals.ts).
 */
export async function createDncEntry(
  tenant: Tenant,
  services: Pick<Services, 'queue'>,
  body: { phone: string; reason?: string | null },
): Promise<{ row: DncEntryRow; created: boolean }> {
  const parsed = parsePhone(body.phone);
  if (!parsed) throw invalidField('body.phone', 'is not a valid phone number for its country', 'INVALID_PHONE');
  const entry = { phone: parsed.e164, reason: body.reason ?? null, source: 'API', actor: tenant.apiKeyId ?? null };
  const inserted = await inTransaction(tenant.db, async (tx) => {
    const row = await q.insertDncEntry(tx, tenant.organizationId, entry);
    if (row) await failUnsentAfter(tx, queueOf(services), tenant.organizationId, [row.phone], 'DNC_LISTED');
    return row;
  });
  if (inserted) return { row: inserted, created: true };
  const existing = await q.findDncEntryByPhone(tenant.db, tenant.organizationId, entry.phone);
  if (!existing) throw new Error('DNC entry vanished between insert and read');
  return { row: existing, created: false };
}

/**
 * Lists every valid phone of the batch in one transaction. Each item answers `added`, `already_listed`,
 * `invalid` (not E.164, or not a valid number) or `duplicate_in_request` (the same number earlier in the list),
 * with the id of the entry for the first two. The phones added have their messages not yet sent failed (refusals.ts).
 */
export async function createDncEntriesBatch(
  tenant: Tenant,
  services: Pick<Services, 'queue'>,
  body: { phones: string[]; reason?: string | null },
): Promise<DncBatchItem[]> {
  const seen = new Set<string>();
  const items = body.phones.map((phone): { phone: string; e164: string | null; status: DncBatchStatus } => {
    const e164 = E164.test(phone) ? (parsePhone(phone)?.e164 ?? null) : null;
    if (!e164) return { phone, e164: null, status: 'invalid' };
    if (seen.has(e164)) return { phone, e164: null, status: 'duplicate_in_request' };
    seen.add(e164);
    return { phone, e164, status: 'added' };
  });
  const phones = [...seen];
  const how = { reason: body.reason ?? null, source: 'BATCH', actor: tenant.apiKeyId ?? null };
  const { ids, added } = await inTransaction(tenant.db, async (tx) => {
    const ids = new Map<string, string>();
    const added = new Set<string>();
    for (const r of await q.insertDncEntries(tx, tenant.organizationId, phones, how)) {
      ids.set(r.phone, r.id);
      added.add(r.phone);
    }
    for (const r of await q.dncEntryIds(
      tx,
      tenant.organizationId,
      phones.filter((p) => !added.has(p)),
    ))
      ids.set(r.phone, r.id);
    await failUnsentAfter(tx, queueOf(services), tenant.organizationId, [...added], 'DNC_LISTED');
    return { ids, added };
  });
  return items.map((it) =>
    it.e164 === null
      ? { phone: it.phone, status: it.status, id: null }
      : { phone: it.phone, status: added.has(it.e164) ? 'added' : 'already_listed', id: ids.get(it.e164) ?? null },
  );
}

/** Removes an entry; 404 when the organization has no such entry. Answers its id. */
export async function deleteDncEntry(tenant: Tenant, id: string): Promise<string> {
  return found(await q.deleteDncEntry(tenant.db, tenant.organizationId, id), 'DNC entry');
}
