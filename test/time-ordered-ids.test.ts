// Message and contact ids are time-ordered uuids (migration 0029): big batches append to the indexes instead of
// scattering over them. On PostgreSQL 18 they come from uuidv7(); older servers get the same layout from SQL. A
// contact import draws its ids in its own process (timeOrderedIds, src/lib/time-ordered-ids.ts): they must be what
// time_ordered_uuid() makes, read the same by PostgreSQL, and strictly increasing in the order drawn, within a call
// and across calls, so rows written in that order keep it among ties of their other sort keys (a consent history's
// created_at).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { UUID_V7_SQL } from '../src/db/migrations/0029_bulk_writes.ts';
import { timeOrderedIds } from '../src/lib/time-ordered-ids.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv.close());

/** The Unix milliseconds in a v7 uuid's first 48 bits. */
const msOf = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

describe('time-ordered ids', () => {
  it('the SQL form for older servers is a version-7, RFC 4122 variant uuid carrying the current time', async () => {
    const before = Date.now();
    const rows = (await sql<{ id: string }>`select ${sql.raw(UUID_V7_SQL)} as id from generate_series(1, 200)`.execute(srv.context.db))
      .rows;
    const after = Date.now();
    expect(new Set(rows.map((r) => r.id)).size).toBe(200);
    for (const { id } of rows) {
      expect(id[14]).toBe('7');
      expect('89ab').toContain(id[19]!);
      expect(msOf(id)).toBeGreaterThanOrEqual(before - 1000);
      expect(msOf(id)).toBeLessThanOrEqual(after + 1000);
    }
  });

  it('contacts and messages created later get greater ids', async () => {
    const org = await srv.newOrg('Time-ordered ids');
    const key = org.apiKey.secret;
    const ids: string[] = [];
    for (const phone of ['+14155550181', '+14155550182']) {
      const contact = await call(srv, 'POST', '/v1/contacts', { key, body: { phone, consentType: 'MARKETING' } });
      expect(contact.status, contact.text).toBe(201);
      ids.push(contact.body.id);
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(ids[0]![14]).toBe('7');
    expect(ids[1]! > ids[0]!).toBe(true);
    const sent: string[] = [];
    for (const contactId of ids) {
      const res = await call(srv, 'POST', '/v1/messages/send', {
        key,
        body: { contactId, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'hi' } },
      });
      expect(res.status, res.text).toBe(200);
      sent.push(res.body.data.messageId);
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(sent[0]![14]).toBe('7');
    expect(sent[1]! > sent[0]!).toBe(true);
  });

  it('timeOrderedIds: distinct version-7 uuids of the current millisecond, strictly increasing within and across calls', () => {
    const before = Date.now();
    const ids = [...timeOrderedIds(20_000), ...timeOrderedIds(1), ...timeOrderedIds(3)];
    const after = Date.now();
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    for (let i = 1; i < ids.length; i++) expect(ids[i - 1]! < ids[i]!, `${ids[i - 1]} < ${ids[i]}`).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(msOf(ids[0]!)).toBeGreaterThanOrEqual(before);
    expect(msOf(ids.at(-1)!)).toBeLessThanOrEqual(after + 1);
    expect(timeOrderedIds(0)).toEqual([]);
  });

  it('timeOrderedIds: PostgreSQL reads them as its own: version 7, the same clock, the order of the text', async () => {
    const ids = timeOrderedIds(1000);
    const { rows } = await sql<{ versions: number[]; inOrder: boolean; skewMs: number }>`
      with given as (select id::uuid as id, n from unnest(${ids}::text[]) with ordinality as t(id, n)),
           theirs as (select time_ordered_uuid() as id)
      select array(select distinct uuid_extract_version(id) from given) as versions,
             (select bool_and(ordered) from (select n = 1 or id > lag(id) over (order by n) as ordered from given) o) as "inOrder",
             (select abs(extract(epoch from uuid_extract_timestamp(g.id) - uuid_extract_timestamp(theirs.id)) * 1000)
                from given g, theirs where g.n = 1)::float8 as "skewMs"`.execute(srv.context.db);
    expect(rows[0]).toMatchObject({ versions: [7], inOrder: true });
    expect(rows[0]!.skewMs).toBeLessThan(5_000);
  });
});
