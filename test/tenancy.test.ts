// Tenancy by construction: the database handle a handler gets is bound to its organization, and a query on a
// tenant table that does not name the organization fails before it reaches PostgreSQL.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindTenant, loadTenantTables, TenantScopeError, tenant } from '../src/db/tenant.ts';
import { startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let orgA: string;
let orgB: string;
let tables: ReadonlySet<string>;

beforeAll(async () => {
  srv = await startTestServer();
  orgA = (await srv.newOrg('Tenant A')).organizationId;
  orgB = (await srv.newOrg('Tenant B')).organizationId;
  tables = await loadTenantTables(srv.context.db);
});
afterAll(() => srv.close());

describe('the tenant guard', () => {
  it('knows the tenant tables from the schema (every table with organization_id)', () => {
    for (const t of ['contacts', 'messages', 'api_keys', 'webhook_endpoints', 'idempotency_keys']) expect(tables.has(t), t).toBe(true);
    expect(tables.has('organizations')).toBe(false);
  });

  it('refuses a deliberately unscoped query on a tenant table', async () => {
    const db = bindTenant(srv.context.db, orgA, tables);
    await expect(db.selectFrom('contacts').selectAll().execute()).rejects.toBeInstanceOf(TenantScopeError);
    await expect(db.updateTable('contacts').set({ name: 'x' }).where('phone', '=', '+14155550100').execute()).rejects.toBeInstanceOf(
      TenantScopeError,
    );
    await expect(db.deleteFrom('tags').where('name', '=', 'x').execute()).rejects.toBeInstanceOf(TenantScopeError);
  });

  it('refuses a query scoped to another organization', async () => {
    const db = bindTenant(srv.context.db, orgA, tables);
    await expect(tenant(db.selectFrom('contacts'), orgB).selectAll().execute()).rejects.toBeInstanceOf(TenantScopeError);
    await expect(db.insertInto('tags').values({ organization_id: orgB, name: 'other' }).execute()).rejects.toBeInstanceOf(TenantScopeError);
  });

  it('lets scoped queries, inserts carrying the organization, and transactions through', async () => {
    const db = bindTenant(srv.context.db, orgA, tables);
    await db.insertInto('tags').values({ organization_id: orgA, name: 'guarded' }).execute();
    const rows = await tenant(db.selectFrom('tags'), orgA).select('name').execute();
    expect(rows.map((r) => r.name)).toContain('guarded');
    await db.transaction().execute(async (tx) => {
      await expect(tx.selectFrom('tags').selectAll().execute()).rejects.toBeInstanceOf(TenantScopeError);
    });
    // Queries on tables without organization_id are not the guard's business.
    await expect(db.selectFrom('organizations').select('id').where('id', '=', orgA).execute()).resolves.toHaveLength(1);
  });
  it('reads values as data and never walks them (an upload stored as a 10 MB Buffer was walked byte by byte)', () => {
    const db = bindTenant(srv.context.db, orgA, tables);
    // A value that cannot be walked: listing its contents throws. The guard checks the statement, not its data.
    const unwalkable = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('the guard walked a value');
        },
      },
    );
    expect(() =>
      db
        .insertInto('tags')
        .values({ organization_id: orgA, name: unwalkable as never })
        .compile(),
    ).not.toThrow();
    expect(() =>
      db
        .insertInto('tags')
        .values({ organization_id: orgB, name: unwalkable as never })
        .compile(),
    ).toThrow(TenantScopeError);
  });

  it('sees tenant tables named in raw sql: refused without the organization, let through with it', async () => {
    const db = bindTenant(srv.context.db, orgA, tables);
    const refused = [
      sql`select count(*) from contacts`,
      sql`select c.id from "public"."contacts" c where c.phone = ${'+14155550100'}`,
      sql`select t.id from organizations o join tags t on t.name = o.name where o.id = ${orgA}`,
      sql`update tags set name = name where name = ${'x'}`,
      sql`delete from tags where organization_id = ${orgB}`,
      sql`insert into tags (organization_id, name) values (${orgB}, 'raw other')`,
    ];
    for (const [i, q] of refused.entries()) await expect(q.execute(db), `refused[${i}]`).rejects.toBeInstanceOf(TenantScopeError);
    await sql`insert into tags (organization_id, name) values (${orgA}, 'raw guarded')`.execute(db);
    const { rows } = await sql<{ name: string }>`select name from tags where organization_id = ${orgA} and name = 'raw guarded'`.execute(
      db,
    );
    expect(rows).toEqual([{ name: 'raw guarded' }]);
    // Raw SQL on tables without organization_id is not the guard's business.
    await expect(sql`select id from organizations where id = ${orgA}`.execute(db)).resolves.toMatchObject({ rows: [{ id: orgA }] });
  });
  it('scans the text of a raw fragment once: sql.raw and sql.join make new fragment arrays each time, and are remembered by their text', () => {
    const db = bindTenant(srv.context.db, orgA, tables);
    const statement = () =>
      db
        .selectFrom('tags')
        .select('id')
        .where(
          sql<boolean>`${sql.raw('organization_id')} = ${orgA} and exists (${sql.raw('select 1 from contacts c where c.organization_id = tags.organization_id')})`,
        )
        .where(sql<boolean>`name in (${sql.join(['a', 'b'])})`);
    statement().compile(); // warm
    const matchAll = String.prototype.matchAll;
    let scans = 0;
    String.prototype.matchAll = function (this: string, ...args: Parameters<typeof matchAll>) {
      scans++;
      return matchAll.apply(this, args);
    };
    try {
      statement().compile();
    } finally {
      String.prototype.matchAll = matchAll;
    }
    expect(scans).toBe(0);
    // Remembered, and still read: the raw subquery on contacts needs the organization's id, as before.
    expect(() =>
      db
        .selectFrom('organizations')
        .select('id')
        .where(sql<boolean>`exists (${sql.raw('select 1 from contacts c where c.organization_id = tags.organization_id')})`)
        .compile(),
    ).toThrow(TenantScopeError);
  });
});
