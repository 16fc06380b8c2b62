// Intents: postback tokens bot flows branch on. The value is normalized, unique per organization (409
// ALREADY_EXISTS) and immutable (400 TOKEN_IMMUTABLE) except through rewriteIntent, which renames it and every
// flow reference in one transaction; the id never changes.
import { inTransaction } from '../../db/database.ts';
import * as q from '../../db/queries/dictionaries/intents.ts';
import { lockDictionary } from '../../db/queries/dictionaries/shared.ts';
import { conflict, found } from '../errors.ts';
import type { Tenant } from '../tenant.ts';
import { rewriteReferences, usageOf, type RewriteResult, type Usage } from './flow-references.ts';
import { assertCategory, assertSameToken, normalizeToken } from './tokens.ts';

const taken = (value: string) => conflict('ALREADY_EXISTS', `The organization already has an intent with the value "${value}".`);

export function listIntents(tenant: Tenant): Promise<q.IntentRow[]> {
  return q.listIntents(tenant.db, tenant.organizationId);
}

/** 404 naming body.categoryId for a folder not of the organization, 409 for a value the organization has. */
export function createIntent(
  tenant: Tenant,
  body: { value: string; label?: string; description?: string | null; categoryId?: string | null; active?: boolean },
): Promise<q.IntentRow> {
  const orgId = tenant.organizationId;
  const value = normalizeToken(body.value);
  return inTransaction(tenant.db, async (tx) => {
    await lockDictionary(tx, 'intents', orgId);
    await assertCategory(tx, orgId, body.categoryId);
    const row = await q.insertIntent(tx, orgId, {
      value,
      label: body.label ?? value.slice(0, 100),
      description: body.description ?? null,
      categoryId: body.categoryId ?? null,
      active: body.active ?? true,
    });
    if (!row) throw taken(value);
    return row;
  });
}

/** 404 unknown in the organization, 400 TOKEN_IMMUTABLE for another value, 404 naming body.categoryId for a foreign folder. */
export function updateIntent(
  tenant: Tenant,
  id: string,
  body: { value?: string; label?: string; description?: string | null; categoryId?: string | null; active?: boolean },
): Promise<q.IntentRow> {
  const orgId = tenant.organizationId;
  return inTransaction(tenant.db, async (tx) => {
    const current = found(await q.getIntent(tx, orgId, id, { forUpdate: true }), 'Intent');
    assertSameToken('body.value', body.value, current.value);
    await assertCategory(tx, orgId, body.categoryId);
    const { label, description, categoryId, active } = body;
    if (label === undefined && description === undefined && categoryId === undefined && active === undefined) return current;
    return found(await q.updateIntent(tx, orgId, id, { label, description, categoryId, active }), 'Intent');
  });
}

/** 404 unknown in the organization. Flows keep the token as a plain postback value. Answers the id. */
export async function deleteIntent(tenant: Tenant, id: string): Promise<string> {
  return found(await q.deleteIntent(tenant.db, tenant.organizationId, id), 'Intent');
}

export function intentUsage(tenant: Tenant, id: string): Promise<{ intent: q.IntentRow; usage: Usage }> {
  const orgId = tenant.organizationId;
  return inTransaction(tenant.db, async (tx) => {
    const intent = found(await q.getIntent(tx, orgId, id), 'Intent');
    return { intent, usage: await usageOf(tx, orgId, 'intent', intent.value) };
  });
}

/** 404 unknown, 409 for a value another intent has; the same value is a no-op with zero counts. */
export function rewriteIntent(tenant: Tenant, id: string, body: { newValue: string }): Promise<RewriteResult> {
  const orgId = tenant.organizationId;
  const next = normalizeToken(body.newValue);
  return inTransaction(tenant.db, async (tx) => {
    await lockDictionary(tx, 'intents', orgId);
    const current = found(await q.getIntent(tx, orgId, id, { forUpdate: true }), 'Intent');
    const result = { id: current.id, kind: 'intent' as const, old: current.value, new: next, rewrittenAt: new Date() };
    if (next === current.value) return { ...result, botsUpdated: 0, referencesRewritten: 0 };
    if (await q.findIntentByValue(tx, orgId, next)) throw taken(next);
    found(await q.updateIntent(tx, orgId, id, { value: next }), 'Intent');
    return { ...result, ...(await rewriteReferences(tx, orgId, 'intent', current.value, next)) };
  });
}
