// Message and contact ids are time-ordered uuids (migration 0029): big batches append to the indexes instead of
// scattering over them. On PostgreSQL 18 they come from uuidv7(); older servers get the same layout from SQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { UUID_V7_SQL } from '../src/db/migrations/0029_bulk_writes.ts';
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
});
