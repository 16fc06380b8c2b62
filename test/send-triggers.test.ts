// What a send's accepting statement makes PostgreSQL run besides itself (issue 38, bench part m1): no plpgsql row
// trigger per message. A message's attribution (its sender's program, brand and campaign registration, migration
// 0044) is written by the statement from sender_attribution() (migration 0059), read once per statement; the row
// trigger that wrote it before (a plpgsql call and its query per message row) attributes only the rows the
// statement does not write: inbound messages. Checked on the statement the service really sent, explained with its
// own parameters in a transaction rolled back. Nor does it carry parts its content does not need: a content without
// tracked links has no insert into message_links.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { watchingStatements } from './support/statements.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let programId: string;
let seq = 0;

async function contact(): Promise<string> {
  const row = await srv.context.db
    .insertInto('contacts')
    .values({
      organization_id: org.organizationId,
      phone: `+1415777${String(1000 + ++seq)}`,
      attributes: '{}',
      consent_type: 'MARKETING',
      time_zone: 'UTC',
      quiet_hours_start: '00:00',
      quiet_hours_end: '00:00', // never quiet: accepted whatever the hour of the run
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

beforeAll(async () => {
  srv = await startTestServer();
  org = await srv.newOrg('Send triggers');
  // The sandbox sender sends under an ACTIVE program (attached as PRIMARY).
  const p = await srv.context.db
    .insertInto('programs')
    .values({ organization_id: org.organizationId, name: 'Triggers program', status: 'ACTIVE', channels: ['SMS'], sender_id: org.senderId })
    .returning('id')
    .executeTakeFirstOrThrow();
  programId = p.id;
  await srv.context.db
    .insertInto('program_senders')
    .values({ organization_id: org.organizationId, program_id: programId, sender_id: org.senderId, role: 'PRIMARY', status: 'ACTIVE' })
    .execute();
});
afterAll(() => srv.close());

type PlanNode = { 'Node Type': string; 'Relation Name'?: string; Plans?: PlanNode[] };
type Explained = { Plan: PlanNode; Triggers?: Array<{ 'Trigger Name': string; Relation: string; Calls: number }> };

/** The tables the plan writes (its ModifyTable nodes). */
const writtenBy = (n: PlanNode): string[] => [
  ...(n['Node Type'] === 'ModifyTable' && n['Relation Name'] ? [n['Relation Name']] : []),
  ...(n.Plans ?? []).flatMap(writtenBy),
];

describe("a send's accepting statement", () => {
  it('attributes its message itself: no row trigger runs per message, no insert of tracked links without links; an inbound message is attributed by the trigger', async () => {
    const send = (contactId: string) =>
      call(srv, 'POST', '/v1/messages/send', {
        key: org.apiKey.secret,
        body: {
          contactId,
          senderId: org.senderId,
          messageType: 'TRANSACTIONAL',
          content: { type: 'text', text: 'Your order has shipped' },
        },
      });
    expect((await send(await contact())).status).toBe(200); // the shape's first execution
    const seen: Array<{ text: string; values: unknown[] }> = [];
    let messageId = '';
    await watchingStatements(
      ({ text, values }) => {
        if (text.includes('/* prepared:accept-one */')) seen.push({ text, values });
      },
      async () => {
        const res = await send(await contact());
        expect(res.status, res.text).toBe(200);
        messageId = res.body.data.messageId;
      },
    );
    expect(seen).toHaveLength(1);
    const message = await srv.context.db.selectFrom('messages').selectAll().where('id', '=', messageId).executeTakeFirstOrThrow();
    expect(message.program_id).toBe(programId);

    const client = new pg.Client({
      connectionString: (srv.context.pool as unknown as { options: { connectionString: string } }).options.connectionString,
    });
    await client.connect();
    try {
      await client.query('begin');
      const res = await client.query(`explain (analyze, format json) ${seen[0]!.text}`, seen[0]!.values);
      await client.query('rollback');
      const explained = (res.rows[0] as { 'QUERY PLAN': Explained[] })['QUERY PLAN'][0]!;
      // A content without tracked links: no insert into message_links in the plan, which is opened and initialised at
      // every execution (tracked-links.test.ts sends the contents that have them).
      expect(writtenBy(explained.Plan).sort()).toEqual(['conversations', 'job_common', 'messages']);
      const triggers = explained.Triggers ?? [];
      const onMessages = triggers.filter((t) => t.Relation === 'messages').map((t) => t['Trigger Name']);
      // The rollup's statement trigger (one call per statement) and the conversation's foreign key; nothing per row in plpgsql.
      expect(onMessages).not.toContain('messages_attribute');
      expect(onMessages).toContain('messages_analytics_rollup_insert');
    } finally {
      await client.end();
    }

    const inbound = await srv.context.db
      .insertInto('messages')
      .values({
        organization_id: org.organizationId,
        conversation_id: message.conversation_id,
        contact_id: message.contact_id,
        contact_phone: message.contact_phone,
        sender_id: org.senderId,
        direction: 'inbound',
        channel: 'SMS',
        status: 'received',
        content: JSON.stringify({ type: 'text', text: 'Thanks' }),
        segments: 1,
        origin: 'inbound',
      })
      .returning('program_id')
      .executeTakeFirstOrThrow();
    expect(inbound.program_id).toBe(programId);
  });
});
