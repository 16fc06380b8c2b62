// Variable definitions: capture tokens bot flows store answers into and reference as {{name}}. The name is
// normalized, unique per organization (409 ALREADY_EXISTS) and immutable (400 TOKEN_IMMUTABLE) except through
// rewriteVariable, which renames it and every flow reference in one transaction; the id never changes.
// `items` exist exactly when the type is `list` (a CHECK holds it too).
import { inTransaction } from '../../db/database.ts';
import { lockDictionary } from '../../db/queries/dictionaries/shared.ts';
import * as q from '../../db/queries/dictionaries/variables.ts';
import type { VariableType } from '../../db/tables/dictionaries.ts';
import { conflict, found, invalidField } from '../errors.ts';
import type { Tenant } from '../tenant.ts';
import { rewriteReferences, usageOf, type RewriteResult, type Usage } from './flow-references.ts';
import { assertCategory, assertSameToken, normalizeToken } from './tokens.ts';

export type { VariableType } from '../../db/tables/dictionaries.ts';

const taken = (name: string) => conflict('ALREADY_EXISTS', `The organization already has a variable definition named "${name}".`);

export function listVariables(tenant: Tenant): Promise<q.VariableRow[]> {
  return q.listVariables(tenant.db, tenant.organizationId);
}

/** 400 for items not matching the type, 404 naming body.categoryId for a foreign folder, 409 for a name the organization has. */
export function createVariable(
  tenant: Tenant,
  body: { name?: string; type?: VariableType; items?: string[]; categoryId?: string | null },
): Promise<q.VariableRow> {
  // name and type are required by the document (the generated type of its anyOf leaves them optional).
  if (body.name === undefined) throw invalidField('body.name', 'is required');
  if (body.type === undefined) throw invalidField('body.type', 'is required');
  if (body.type === 'list' && body.items === undefined) throw invalidField('body.items', 'is required when type is list');
  if (body.type !== 'list' && body.items !== undefined) throw invalidField('body.items', 'is allowed only when type is list');
  const orgId = tenant.organizationId;
  const name = normalizeToken(body.name);
  const type = body.type;
  return inTransaction(tenant.db, async (tx) => {
    await lockDictionary(tx, 'variable_definitions', orgId);
    await assertCategory(tx, orgId, body.categoryId);
    const row = await q.insertVariable(tx, orgId, { name, type, items: body.items ?? null, categoryId: body.categoryId ?? null });
    if (!row) throw taken(name);
    return row;
  });
}

/** 404 unknown, 400 TOKEN_IMMUTABLE for another name, 400 for items the (new) type cannot have, 404 naming body.categoryId for a foreign folder. */
export function updateVariable(
  tenant: Tenant,
  id: string,
  body: { name?: string; type?: VariableType; items?: string[]; categoryId?: string | null },
): Promise<q.VariableRow> {
  const orgId = tenant.organizationId;
  return inTransaction(tenant.db, async (tx) => {
    const current = found(await q.getVariable(tx, orgId, id, { forUpdate: true }), 'Variable definition');
    assertSameToken('body.name', body.name, current.name);
    const type = body.type ?? current.type;
    if (body.type === 'list' && body.items === undefined) throw invalidField('body.items', 'is required when type is list');
    if (type !== 'list' && body.items !== undefined) throw invalidField('body.items', 'is allowed only when type is list');
    await assertCategory(tx, orgId, body.categoryId);
    const items = body.items ?? (type === 'list' ? undefined : current.items === null ? undefined : null);
    const change = { type: body.type, items, categoryId: body.categoryId };
    if (change.type === undefined && change.items === undefined && change.categoryId === undefined) return current;
    return found(await q.updateVariable(tx, orgId, id, change), 'Variable definition');
  });
}

/** 404 unknown in the organization. Flows keep the token as an untyped variable. Answers the id. */
export async function deleteVariable(tenant: Tenant, id: string): Promise<string> {
  return found(await q.deleteVariable(tenant.db, tenant.organizationId, id), 'Variable definition');
}

export function variableUsage(tenant: Tenant, id: string): Promise<{ variable: q.VariableRow; usage: Usage }> {
  const orgId = tenant.organizationId;
  return inTransaction(tenant.db, async (tx) => {
    const variable = found(await q.getVariable(tx, orgId, id), 'Variable definition');
    return { variable, usage: await usageOf(tx, orgId, 'variable', variable.name) };
  });
}

/** 404 unknown, 409 for a name another definition has; the same name is a no-op with zero counts. */
export function rewriteVariable(tenant: Tenant, id: string, body: { newName: string }): Promise<RewriteResult> {
  const orgId = tenant.organizationId;
  const next = normalizeToken(body.newName);
  return inTransaction(tenant.db, async (tx) => {
    await lockDictionary(tx, 'variable_definitions', orgId);
    const current = found(await q.getVariable(tx, orgId, id, { forUpdate: true }), 'Variable definition');
    const result = { id: current.id, kind: 'variable' as const, old: current.name, new: next, rewrittenAt: new Date() };
    if (next === current.name) return { ...result, botsUpdated: 0, referencesRewritten: 0 };
    if (await q.findVariableByName(tx, orgId, next)) throw taken(next);
    found(await q.updateVariable(tx, orgId, id, { name: next }), 'Variable definition');
    return { ...result, ...(await rewriteReferences(tx, orgId, 'variable', current.name, next)) };
  });
}
