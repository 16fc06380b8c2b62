// Hot reads compiled once (src/db/prepared.ts, compiledOnce): built and checked by the tenant guard on the first
// execution only, then run with each execution's values; the tenant wall holds per execution.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { createDb, type Db } from '../src/db/database.ts';
import { compiledOnce } from '../src/db/compiled-once.ts';
import { bindTenant, loadTenantTables, tenant, TenantScopeError } from '../src/db/tenant.ts';
import { listApiKeys } from '../src/db/queries/api-keys/api-keys.ts';
import { createOrganization, type CreatedOrganization } from '../src/domain/organizations.ts';
import { loadDocument } from '../src/contract/document.ts';

let db: Db;
let a: CreatedOrganization;
let b: CreatedOrganization;
beforeAll(async () => {
  db = createDb(inject('databaseUrl'), 2).db;
  a = await createOrganization(db, loadDocument(), 'Compiled once A');
  b = await createOrganization(db, loadDocument(), 'Compiled once B');
});
afterAll(() => db.destroy());

describe('compiledOnce', () => {
  it('builds and checks a statement once, then runs it with each execution’s values', async () => {
    let builds = 0;
    const names = compiledOnce('test-key-names', (d, p: { organizationId: string; limit: number }) => {
      builds++;
      return tenant(d.selectFrom('api_keys'), p.organizationId)
        .modifyFront(sql.raw('/* prepared:test-key-names */'))
        .select(['id', 'name'])
        .limit(p.limit);
    });
    const tables = await loadTenantTables(db);
    expect(await names.execute(bindTenant(db, a.organizationId, tables), { organizationId: a.organizationId, limit: 5 })).toEqual([
      { id: a.apiKey.id, name: expect.any(String) },
    ]);
    expect(await names.execute(bindTenant(db, b.organizationId, tables), { organizationId: b.organizationId, limit: 5 })).toEqual([
      { id: b.apiKey.id, name: expect.any(String) },
    ]);
    expect(await names.execute(db, { organizationId: a.organizationId, limit: 0 })).toEqual([]);
    expect(builds).toBe(1);
    // The list of GET /v1/api-keys, through a handle bound to the organization, as a request runs it.
    const page = await listApiKeys(bindTenant(db, a.organizationId, tables), a.organizationId, { limit: 20, offset: 0 });
    expect(page).toEqual({ rows: [expect.objectContaining({ id: a.apiKey.id })], total: 1 });
  });

  it("refuses an execution for another organization than the handle's", async () => {
    const tables = await loadTenantTables(db);
    await expect(listApiKeys(bindTenant(db, a.organizationId, tables), b.organizationId, { limit: 20, offset: 0 })).rejects.toThrow(
      TenantScopeError,
    );
  });

  it('refuses, on its first execution, a statement the tenant guard refuses or a value not bound as a parameter', async () => {
    const unscoped = compiledOnce('test-unscoped', (d, p: { limit: number }) =>
      d.selectFrom('api_keys').modifyFront(sql.raw('/* prepared:test-unscoped */')).select('id').limit(p.limit),
    );
    await expect(unscoped.execute(db, { limit: 1 })).rejects.toThrow(TenantScopeError);
    const inlined = compiledOnce('test-inlined', (d, p: { organizationId: string }) =>
      d
        .selectFrom('api_keys')
        .modifyFront(sql.raw('/* prepared:test-inlined */'))
        .select('id')
        .where(sql<boolean>`organization_id = ${sql.lit(p.organizationId)}`),
    );
    await expect(inlined.execute(db, { organizationId: a.organizationId })).rejects.toThrow(/did not become parameters/);
  });
});
