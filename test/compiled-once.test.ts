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
    expect(builds).toBe(1);
    // A zero is the shape's (a builder may branch on it): built once more.
    expect(await names.execute(db, { organizationId: a.organizationId, limit: 0 })).toEqual([]);
    expect(await names.execute(db, { organizationId: b.organizationId, limit: 0 })).toEqual([]);
    expect(builds).toBe(2);
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
  it('takes data of any shape: flags, nulls, lengths and kept values make the shape; strings, numbers, dates and arrays are values', async () => {
    let builds = 0;
    type P = { organizationId: string; names: string[]; since: Date; only: string | null; order: string; page: { limit: number } };
    const keys = compiledOnce(
      'test-key-shapes',
      (d, p: P) => {
        builds++;
        let q = tenant(d.selectFrom('api_keys'), p.organizationId)
          .modifyFront(sql.raw('/* prepared:test-key-shapes */'))
          .select('id')
          .where('created_at', '>', p.since)
          .where(sql<boolean>`name = any(${p.names}::text[])`);
        if (p.only !== null) q = q.where('name', '=', p.only);
        return q.orderBy('name', p.order === 'desc' ? 'desc' : 'asc').limit(p.page.limit);
      },
      { keep: ['order'] },
    );
    const tables = await loadTenantTables(db);
    const on = (org: CreatedOrganization) => bindTenant(db, org.organizationId, tables);
    const [keyA] = await db.selectFrom('api_keys').select('name').where('organization_id', '=', a.organizationId).execute();
    const base = { names: [keyA!.name, 'other'], since: new Date(0), only: null, order: 'asc', page: { limit: 5 } };
    expect(await keys.execute(on(a), { ...base, organizationId: a.organizationId })).toEqual([{ id: a.apiKey.id }]);
    expect(await keys.execute(on(b), { ...base, organizationId: b.organizationId })).toEqual([{ id: b.apiKey.id }]);
    expect(await keys.execute(on(a), { ...base, organizationId: a.organizationId, names: ['other', 'none'] })).toEqual([]);
    expect(await keys.execute(on(a), { ...base, organizationId: a.organizationId, since: new Date(Date.now() + 60_000) })).toEqual([]);
    expect(builds).toBe(1);
    // null → a string, and a kept value that changes: other shapes.
    expect(await keys.execute(on(a), { ...base, organizationId: a.organizationId, only: 'other' })).toEqual([]);
    expect(await keys.execute(on(a), { ...base, organizationId: a.organizationId, order: 'desc' })).toEqual([{ id: a.apiKey.id }]);
    expect(builds).toBe(3);
    await expect(keys.execute(on(a), { ...base, organizationId: b.organizationId })).rejects.toThrow(TenantScopeError);
    // A value transformed before it is bound is refused, and so is what is not data.
    const transformed = compiledOnce('test-transformed', (d, p: { organizationId: string; names: string[] }) =>
      tenant(d.selectFrom('api_keys'), p.organizationId)
        .modifyFront(sql.raw('/* prepared:test-transformed */'))
        .select('id')
        .where(sql<boolean>`to_jsonb(name) <@ ${JSON.stringify(p.names)}::jsonb`),
    );
    await expect(transformed.execute(db, { organizationId: a.organizationId, names: ['x'] })).rejects.toThrow(/did not become parameters/);
    await expect(keys.execute(db, { ...base, organizationId: a.organizationId, page: new Map() as never })).rejects.toThrow(/is not data/);
  });
});
