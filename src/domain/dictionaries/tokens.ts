// Rules shared by intents and variable definitions: tokens (intent values, variable names) are compared and stored
// normalized (trimmed, lower case) and never change outside a rewrite; entries are filed in folders of their own
// organization.
import * as categories from '../../db/queries/dictionaries/categories.ts';
import { invalidField, unknownReference } from '../errors.ts';
import type { TenantDb } from '../../db/tenant.ts';

export const normalizeToken = (token: string): string => token.trim().toLowerCase();

/** 400 TOKEN_IMMUTABLE when `sent` (an echo of the token in an update body) differs from the stored token. */
export function assertSameToken(field: 'body.value' | 'body.name', sent: string | undefined, stored: string): void {
  if (sent === undefined || normalizeToken(sent) === stored) return;
  const what = field === 'body.value' ? 'intent value' : 'variable name';
  throw invalidField(field, `the ${what} cannot change (it is "${stored}"); rename it with the rewrite operation`, 'TOKEN_IMMUTABLE');
}

/**
 * 404 NOT_FOUND naming body.categoryId unless it is a folder of the organization (null/undefined pass): the API's
 * unknown-id rule. Call it inside the transaction that files the entry.
 */
export async function assertCategory(db: TenantDb, organizationId: string, categoryId: string | null | undefined): Promise<void> {
  if (categoryId === null || categoryId === undefined) return;
  // Held until the transaction ends, so a concurrent folder delete waits and then unfiles the entry too.
  if (!(await categories.getCategory(db, organizationId, categoryId, { lock: 'keyShare' }))) {
    throw unknownReference('body.categoryId', 'dictionary category');
  }
}
