// Direct sends accepted together (src/domain/messaging/direct-batches.ts): sends that are ready while others are
// being accepted go in one statement, and each request is still answered with its own message or its own refusal.
// So are their reads (src/domain/messaging/send-reads.ts): each still gets its own contact's facts.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISPATCH_QUEUE, type DispatchJob } from '../src/domain/messaging/dispatch.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { watchingStatements } from './support/statements.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let contacts: Array<{ id: string; phone: string }>;

beforeAll(async () => {
  srv = await startTestServer();
  org = await srv.newOrg('Sends together');
  const rows = Array.from({ length: 24 }, (_, i) => ({
    organization_id: org.organizationId,
    phone: `+1415556${String(3000 + i)}`,
    attributes: '{}',
    consent_type: 'MARKETING',
  }));
  contacts = await srv.context.db.insertInto('contacts').values(rows).returning(['id', 'phone']).execute();
  // The last contact is on the do-not-contact list: its sends are refused, whoever they go with.
  await srv.context.db
    .insertInto('dnc_entries')
    .values({ organization_id: org.organizationId, phone: contacts.at(-1)!.phone, source: 'test' })
    .execute();
});
afterAll(() => srv.close());

const send = (contactId: string, text: string) =>
  call(srv, 'POST', '/v1/messages/send', {
    key: org.apiKey.secret,
    body: { contactId, messageType: 'TRANSACTIONAL', content: { type: 'text', text } },
  });

describe('direct sends accepted together', () => {
  it('answers each of many concurrent sends with its own message or refusal, fewer statements than sends', async () => {
    // Warm: the first send of a process compiles the statements.
    expect((await send(contacts[0]!.id, 'warm')).status).toBe(200);
    // Two contents, one contact twice (its second send waits for the next statement), one refused contact.
    const asked = [
      ...contacts.map((c, i) => ({ contactId: c.id, text: i % 2 ? 'Odd one' : 'Even one' })),
      { contactId: contacts[0]!.id, text: 'Twice' },
    ];
    const answers = await Promise.all(asked.map((a) => send(a.contactId, a.text)));

    const refused = contacts.at(-1)!.id;
    asked.forEach((a, i) => {
      const res = answers[i]!;
      if (a.contactId === refused) {
        expect(res.status).toBe(422);
        expect(res.body.code).toBe('DNC_LISTED');
      } else {
        expect(res.status).toBe(200);
        expect(res.body.data.status).toBe('queued');
      }
    });
    const ids = answers.filter((r) => r.status === 200).map((r) => r.body.data.messageId as string);
    expect(new Set(ids).size).toBe(asked.length - 1);
    const stored = await srv.context.db
      .selectFrom('messages')
      .select(['id', 'contact_id', 'content', sql<string>`xmin::text`.as('xid')])
      .where('id', 'in', ids)
      .execute();
    // Each message is its own request's: its contact and its content.
    const byId = new Map(stored.map((m) => [m.id, m]));
    answers.forEach((res, i) => {
      if (res.status !== 200) return;
      const m = byId.get(res.body.data.messageId)!;
      expect(m.contact_id).toBe(asked[i]!.contactId);
      expect((m.content as { text: string }).text).toBe(asked[i]!.text);
    });
    // Accepted together: messages written by one statement share its transaction.
    expect(new Set(stored.map((m) => m.xid)).size).toBeLessThan(ids.length);
    // Every accepted message has its wake job; the messages of one statement share one.
    const jobs = (await srv.context.queue!.findJobs<DispatchJob>(DISPATCH_QUEUE, { queued: true })).map((j) => j.data);
    const woken = jobs.flatMap((d) => d.messageIds ?? d.messageId ?? []);
    expect(ids.filter((id) => !woken.includes(id))).toEqual([]);
    expect(jobs.filter((d) => d.messageIds?.some((id) => ids.includes(id))).length).toBeGreaterThan(0);
    // And its conversation.
    const conversations = await srv.context.db
      .selectFrom('conversations')
      .select(['contact_id', 'last_message_preview'])
      .where('organization_id', '=', org.organizationId)
      .execute();
    expect(conversations.length).toBe(contacts.length - 1);
  });

  it('fails only the send PostgreSQL refuses: the others of its statement are accepted one by one', async () => {
    // A trigger of this test refuses one content of this organization only (test files share the database).
    const refuse = sql.lit(`refused-${org.organizationId}`);
    await sql`create function send_together_refuse() returns trigger language plpgsql as $$
      begin
        if new.organization_id = ${sql.lit(org.organizationId)}::uuid and new.content->>'text' = ${refuse} then
          raise exception 'refused by the test';
        end if;
        return new;
      end $$`.execute(srv.context.db);
    await sql`create trigger send_together_refuse before insert on messages for each row execute function send_together_refuse()`.execute(
      srv.context.db,
    );
    try {
      const texts = contacts.slice(0, 20).map((_, i) => (i === 7 ? `refused-${org.organizationId}` : `Fine ${i}`));
      const answers = await Promise.all(contacts.slice(0, 20).map((c, i) => send(c.id, texts[i]!)));
      expect(answers.map((r) => r.status)).toEqual(texts.map((t) => (t.startsWith('refused') ? 500 : 200)));
    } finally {
      await sql`drop trigger send_together_refuse on messages`.execute(srv.context.db);
      await sql`drop function send_together_refuse()`.execute(srv.context.db);
    }
  });

  it('reads sends of one sender together, each with its own contact: its quiet hours, or a 404 for an unknown one', async () => {
    // Quiet hours around now (UTC) for half of the contacts, never for the others: a MARKETING send is held or queued
    // by its own contact's group, whichever sends it is read with.
    const hhmm = (d: Date) => d.toISOString().slice(11, 16);
    const now = Date.now();
    const rows = Array.from({ length: 16 }, (_, i) => ({
      organization_id: org.organizationId,
      phone: `+1415557${String(4000 + i)}`,
      attributes: '{}',
      consent_type: 'MARKETING',
      time_zone: 'UTC',
      quiet_hours_start: i % 2 ? hhmm(new Date(now - 3_600_000)) : '00:00',
      quiet_hours_end: i % 2 ? hhmm(new Date(now + 3_600_000)) : '00:00',
    }));
    const quietTest = await srv.context.db.insertInto('contacts').values(rows).returning('id').execute();
    const marketing = (contactId: string) =>
      call(srv, 'POST', '/v1/messages/send', {
        key: org.apiKey.secret,
        body: { contactId, messageType: 'MARKETING', content: { type: 'text', text: 'Read together' } },
      });
    expect((await marketing(quietTest[0]!.id)).status).toBe(200); // warm: compiled statements
    const unknown = '3f2b8c1e-6d4a-4f7e-9b1a-2c5d8e9f0a1b';
    const asked = [...quietTest.map((c) => c.id), unknown];
    let reads = 0;
    let answers: Awaited<ReturnType<typeof marketing>>[] = [];
    await watchingStatements(
      (s) => void (s.text.includes('prepared:send-facts') && reads++),
      async () => void (answers = await Promise.all(asked.map(marketing))),
    );
    asked.forEach((id, i) => {
      const res = answers[i]!;
      if (id === unknown) {
        expect(res.status).toBe(404);
        expect(res.body.details).toEqual([expect.objectContaining({ field: 'body.contactId' })]);
      } else {
        expect(res.status, res.text).toBe(200);
        expect(res.body.data.status).toBe(i % 2 ? 'held' : 'queued');
      }
    });
    expect(reads).toBeGreaterThan(0);
    expect(reads).toBeLessThan(asked.length); // read together: fewer reads than sends
  });
});
