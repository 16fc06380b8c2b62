// The list of an organization's keys (GET /v1/api-keys, the authenticated read of issue 13's benchmark) is a named
// prepared statement (src/db/prepared.ts): a query builder's select marked by its front modifier is recognised.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { createDb, type Db } from '../src/db/database.ts';
import { bindTenant, loadTenantTables } from '../src/db/tenant.ts';
import { listApiKeys } from '../src/db/queries/api-keys/api-keys.ts';
import { createOrganization } from '../src/domain/organizations.ts';
import { loadDocument } from '../src/contract/document.ts';

let db: Db;
beforeAll(() => {
  db = createDb(inject('databaseUrl'), 1).db; // one connection: its prepared statements are the ones listed below
});
afterAll(() => db.destroy());

describe('listApiKeys', () => {
  it('runs as a named prepared statement, and pages as before', async () => {
    const org = await createOrganization(db, loadDocument(), 'Prepared list org');
    const tenantDb = bindTenant(db, org.organizationId, await loadTenantTables(db));
    const first = await listApiKeys(tenantDb, org.organizationId, { limit: 20, offset: 0 });
    expect(first.total).toBe(1);
    expect(first.rows.map((r) => r.id)).toEqual([org.apiKey.id]);
    expect(await listApiKeys(tenantDb, org.organizationId, { limit: 20, offset: 0 })).toEqual(first);
    expect(await listApiKeys(tenantDb, org.organizationId, { limit: 5, offset: 5 })).toEqual({ rows: [], total: 1 }); // past the last page

    const { rows } = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(db);
    const list = rows.filter((r) => r.name.startsWith('api-keys-list-'));
    expect(list.map((r) => r.statement)).toContainEqual(
      expect.stringMatching(/^select \/\* prepared:api-keys-list \*\/ \*, count\(\*\) over\(\)/),
    );
  });
});
