// The one rule for handing out or taking over a key's powers: a key may only create, rotate or revoke a key
// whose scopes and roles (roles are scopes named `role:…`) it holds itself. Otherwise a key limited to
// `api-keys:update` could rotate an administrator's key and receive its new secret, or a key limited to
// `api-keys:delete` could revoke an administrator's key.
import { forbidden } from '../errors.ts';

export type GrantAction = 'create' | 'rotate' | 'revoke';

/** The scopes and roles of `target` that `holder` lacks (empty when `holder` may act on `target`). */
function scopesBeyond(holder: ReadonlySet<string>, target: readonly string[]): string[] {
  return [...new Set(target.filter((s) => !holder.has(s)))];
}

const WHAT: Record<GrantAction, string> = {
  create: 'A key cannot grant scopes it does not hold',
  rotate: 'A key cannot rotate a key holding scopes it does not hold itself',
  revoke: 'A key cannot revoke a key holding scopes it does not hold itself',
};

/** Throws 403 FORBIDDEN unless `holder` holds every scope and role of `target`. */
export function assertMayGrant(holder: ReadonlySet<string>, target: readonly string[], action: GrantAction): void {
  const missing = scopesBeyond(holder, target);
  if (missing.length) throw forbidden(`${WHAT[action]}: ${missing.join(', ')}.`);
}
