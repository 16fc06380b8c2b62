// Asset folders through HTTP against the real database: nesting and listing, sibling-unique names, the depth
// limit on create and move, cycles refused, delete rules (subfolders 409, assets unfiled), unknown ids in a
// body (404 naming the field), tenant walls and scopes.
import sharp from 'sharp';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'asset-folders-test-'));
  srv = await startTestServer({ config: { storage: { kind: 'fs', dir } } });
});
afterAll(async () => {
  await srv.close();
  await rm(dir, { recursive: true, force: true });
});

const UNKNOWN = '6f5e4d3c-2b1a-4f9e-8d7c-6b5a4f3e2d1c';

async function newKey(): Promise<string> {
  return (await srv.newOrg('Folders org')).apiKey.secret;
}

async function create(key: string, name: string, parentId?: string | null): Promise<{ id: string; name: string; parentId: string | null }> {
  const res = await call(srv, 'POST', '/v1/asset-folders', { key, body: parentId === undefined ? { name } : { name, parentId } });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

const list = async (key: string, qs = '') => {
  const res = await call(srv, 'GET', `/v1/asset-folders${qs}`, { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data as Array<{ id: string; name: string; parentId: string | null }>;
};

describe('asset folders', () => {
  it('nests folders and lists all, roots or one folder’s children, sorted by name', async () => {
    const key = await newKey();
    const campaigns = await create(key, 'Campaigns');
    const archive = await create(key, 'Archive', null);
    const spring = await create(key, 'Spring', campaigns.id);
    const autumn = await create(key, 'Autumn', campaigns.id);
    expect(spring).toMatchObject({ name: 'Spring', parentId: campaigns.id });
    expect((await list(key)).map((f) => f.name)).toEqual(['Archive', 'Autumn', 'Campaigns', 'Spring']);
    expect((await list(key, '?parentId=null')).map((f) => f.id)).toEqual([archive.id, campaigns.id]);
    expect((await list(key, `?parentId=${campaigns.id}`)).map((f) => f.id)).toEqual([autumn.id, spring.id]);
    expect(await list(key, `?parentId=${UNKNOWN}`)).toEqual([]);
    expect((await call(srv, 'GET', '/v1/asset-folders?parentId=root', { key })).status).toBe(400);
  });

  it('keeps names unique among siblings only', async () => {
    const key = await newKey();
    const a = await create(key, 'A');
    const b = await create(key, 'B');
    await create(key, 'Shared', a.id);
    await create(key, 'Shared', b.id); // same name, other parent: fine
    await create(key, 'Shared'); // and at the root
    const dup = await call(srv, 'POST', '/v1/asset-folders', { key, body: { name: 'Shared', parentId: a.id } });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('ALREADY_EXISTS');
    const rootDup = await call(srv, 'POST', '/v1/asset-folders', { key, body: { name: 'A' } });
    expect(rootDup.body.code).toBe('ALREADY_EXISTS');
    // renaming onto a sibling's name, or moving next to a folder of the same name
    const rename = await call(srv, 'PATCH', `/v1/asset-folders/${b.id}`, { key, body: { name: 'A' } });
    expect(rename.status).toBe(409);
    expect(rename.body.code).toBe('ALREADY_EXISTS');
    const c = await create(key, 'Shared', (await create(key, 'C')).id);
    const move = await call(srv, 'PATCH', `/v1/asset-folders/${c.id}`, { key, body: { parentId: a.id } });
    expect(move.body.code).toBe('ALREADY_EXISTS');
    // renaming to its own name changes nothing
    expect((await call(srv, 'PATCH', `/v1/asset-folders/${a.id}`, { key, body: { name: 'A' } })).status).toBe(200);
  });

  it('renames and moves folders; refuses cycles with 409 CONFLICT', async () => {
    const key = await newKey();
    const top = await create(key, 'Top');
    const mid = await create(key, 'Mid', top.id);
    const leaf = await create(key, 'Leaf', mid.id);
    const renamed = await call(srv, 'PATCH', `/v1/asset-folders/${mid.id}`, { key, body: { name: 'Middle' } });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.data).toMatchObject({ id: mid.id, name: 'Middle', parentId: top.id });
    for (const target of [top.id, mid.id, leaf.id]) {
      const res = await call(srv, 'PATCH', `/v1/asset-folders/${top.id}`, { key, body: { parentId: target } });
      expect(res.status, target).toBe(409);
      expect(res.body.code).toBe('CONFLICT');
    }
    const toRoot = await call(srv, 'PATCH', `/v1/asset-folders/${mid.id}`, { key, body: { parentId: null } });
    expect(toRoot.body.data.parentId).toBeNull();
    expect((await list(key, '?parentId=null')).map((f) => f.name)).toEqual(['Middle', 'Top']);
    const under = await call(srv, 'PATCH', `/v1/asset-folders/${top.id}`, { key, body: { parentId: leaf.id } });
    expect(under.status, under.text).toBe(200);
    expect((await list(key, `?parentId=${leaf.id}`)).map((f) => f.id)).toEqual([top.id]);
    expect((await call(srv, 'PATCH', `/v1/asset-folders/${top.id}`, { key, body: {} })).status).toBe(400);
  });

  it('nests at most 10 levels, on create and on move', async () => {
    const key = await newKey();
    let parent: string | null = null;
    const chain: string[] = [];
    for (let level = 1; level <= 10; level++) {
      parent = (await create(key, `L${level}`, parent)).id;
      chain.push(parent);
    }
    const eleventh = await call(srv, 'POST', '/v1/asset-folders', { key, body: { name: 'L11', parentId: parent } });
    expect(eleventh.status).toBe(400);
    expect(eleventh.body.details[0].field).toBe('body.parentId');

    // a two-level subtree fits under level 8 (→ 9, 10) but not under level 9 (→ 10, 11)
    const sub = await create(key, 'Sub');
    await create(key, 'SubChild', sub.id);
    expect((await call(srv, 'PATCH', `/v1/asset-folders/${sub.id}`, { key, body: { parentId: chain[8] } })).status).toBe(400);
    const ok = await call(srv, 'PATCH', `/v1/asset-folders/${sub.id}`, { key, body: { parentId: chain[7] } });
    expect(ok.status, ok.text).toBe(200);
  });

  it('answers 404 naming body.parentId for an unknown or foreign parent', async () => {
    const key = await newKey();
    const otherKey = await newKey();
    const foreign = await create(otherKey, 'Theirs');
    const mine = await create(key, 'Mine');
    for (const parentId of [UNKNOWN, foreign.id]) {
      const created = await call(srv, 'POST', '/v1/asset-folders', { key, body: { name: 'X', parentId } });
      expect(created.status).toBe(404);
      expect(created.body.details).toEqual([expect.objectContaining({ field: 'body.parentId' })]);
      const moved = await call(srv, 'PATCH', `/v1/asset-folders/${mine.id}`, { key, body: { parentId } });
      expect(moved.status).toBe(404);
      expect(moved.body.details).toEqual([expect.objectContaining({ field: 'body.parentId' })]);
    }
  });

  it('deletes an empty folder or one with assets (they become unfiled); refuses one with subfolders', async () => {
    const key = await newKey();
    const parent = await create(key, 'Parent');
    const child = await create(key, 'Child', parent.id);
    const refused = await call(srv, 'DELETE', `/v1/asset-folders/${parent.id}`, { key });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('CONFLICT');

    const f = new FormData();
    f.append(
      'file',
      new Blob([
        await sharp({ create: { width: 4, height: 4, channels: 3, background: '#000' } })
          .png()
          .toBuffer(),
      ]),
      'in-child.png',
    );
    f.append('folderId', child.id);
    const asset = (await call(srv, 'POST', '/v1/assets/upload', { key, rawBody: f })).body.data;
    expect(asset.folderId).toBe(child.id);

    const deleted = await call(srv, 'DELETE', `/v1/asset-folders/${child.id}`, { key });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ success: true, id: child.id });
    expect((await call(srv, 'GET', `/v1/assets/${asset.id}`, { key })).body.data.folderId).toBeNull();
    expect((await call(srv, 'DELETE', `/v1/asset-folders/${parent.id}`, { key })).status).toBe(200);
    expect(await list(key)).toEqual([]);
    expect((await call(srv, 'DELETE', `/v1/asset-folders/${parent.id}`, { key })).status).toBe(404);
  });

  it("answers 404 for another organization's folder, and 403 without the scope", async () => {
    const key = await newKey();
    const otherKey = await newKey();
    const mine = await create(key, 'Private');
    expect((await call(srv, 'PATCH', `/v1/asset-folders/${mine.id}`, { key: otherKey, body: { name: 'Stolen' } })).status).toBe(404);
    expect((await call(srv, 'DELETE', `/v1/asset-folders/${mine.id}`, { key: otherKey })).status).toBe(404);
    expect(await list(otherKey)).toEqual([]);
    expect(await list(otherKey, `?parentId=${mine.id}`)).toEqual([]);
    expect((await list(key)).map((f) => f.name)).toEqual(['Private']);

    const org = await srv.newOrg('Read-only folders org');
    const readOnly = (await srv.newKey(org.organizationId, ['assets:read'])).secret;
    const forbidden = await call(srv, 'POST', '/v1/asset-folders', { key: readOnly, body: { name: 'Nope' } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.code).toBe('FORBIDDEN');
  });

  it('validates names', async () => {
    const key = await newKey();
    expect((await call(srv, 'POST', '/v1/asset-folders', { key, body: { name: '' } })).status).toBe(400);
    expect((await call(srv, 'POST', '/v1/asset-folders', { key, body: { name: 'x'.repeat(101) } })).status).toBe(400);
    expect((await call(srv, 'POST', '/v1/asset-folders', { key, body: { name: 'ok', extra: 1 } })).status).toBe(400);
  });
});
