// Who a service acts for, and what else it may use. Handlers get both from the router (src/http/api.ts);
// workers acting for one organization build a Tenant with tenantFor().
import type { AppContext } from '../app-context.ts';
import { bindTenant, loadTenantTables, type TenantDb } from '../db/tenant.ts';

export type Tenant = {
  organizationId: string;
  /** The API key of the request; undefined for work the system does on the organization's behalf. */
  apiKeyId: string | undefined;
  scopes: ReadonlySet<string>;
  /** Bound to the organization: a query that does not name it fails. Inside an idempotent operation, its transaction. */
  db: TenantDb;
};

/** Configuration, queue, provider, key cache, logger: everything of the app but the unscoped database. */
export type Services = Omit<AppContext, 'db' | 'pool'>;

/** For workers and callbacks acting for one organization (no API key: the system acts). */
export async function tenantFor(app: Pick<AppContext, 'db'>, organizationId: string): Promise<Tenant> {
  return { organizationId, apiKeyId: undefined, scopes: new Set(), db: bindTenant(app.db, organizationId, await loadTenantTables(app.db)) };
}
