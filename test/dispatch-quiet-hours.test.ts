// Quiet hours are checked again when a message is about to be handed to the carrier: a MARKETING message accepted
// outside its recipient's quiet hours may wait into them (a long blast, retries). Deterministic: the contacts are in
// UTC and their quiet period is set around the real clock — one that does not cover now at acceptance, then one
// that does before dispatch. No workers: each test runs the dispatcher itself (dispatchBatch) when it wants to.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBatch } from '../src/domain/blasts/sending.ts';
import { DISPATCH_QUEUE, dispatchBatch, type DispatchJob } from '../src/domain/messaging/dispatch.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { watchingStatements } from './support/statements.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
let seq = 0;

beforeAll(async () => {
  srv = await startTestServer({ config: { webhookAllowPrivate: true } });
  org = await srv.newOrg('Quiet hours at dispatch');
  key = org.apiKey.secret;
  // An endpoint subscribed to message.held: the events are recorded (nothing delivers them without workers).
  const endpoint = await call(srv, 'POST', '/v1/webhook-endpoints', {
    key,
    body: { url: 'http://127.0.0.1:9/hooks', events: ['message.held', 'message.sent'] },
  });
  expect(endpoint.status, endpoint.text).toBe(201);
});
afterAll(() => srv.close());

type Window = { start: string; end: string };
const minute = (offset: number) => new Date(Math.floor(Date.now() / 60_000) * 60_000 + offset * 60_000);
const hhmm = (d: Date) => d.toISOString().slice(11, 16);
/** A quiet period (UTC) that does not cover now: it begins in three hours. */
const notNow = (): Window => ({ start: hhmm(minute(180)), end: hhmm(minute(240)) });
/** A quiet period (UTC) that covers now: it began an hour ago and ends in two hours, at `endsAt`. */
const coveringNow = (): Window & { endsAt: Date } => ({ start: hhmm(minute(-60)), end: hhmm(minute(120)), endsAt: minute(120) });

async function contact(window: Window) {
  return srv.context.db
    .insertInto('contacts')
    .values({
      organization_id: org.organizationId,
      phone: `+1415555${String(3000 + ++seq)}`,
      attributes: JSON.stringify({ cohort: 'quiet-dispatch' }),
      rcs_capable: true,
      consent_type: 'MARKETING',
      time_zone: 'UTC',
      quiet_hours_start: window.start,
      quiet_hours_end: window.end,
    })
    .returning(['id', 'phone'])
    .executeTakeFirstOrThrow();
}

async function setWindow(contactIds: string[], window: Window): Promise<void> {
  await srv.context.db
    .updateTable('contacts')
    .set({ quiet_hours_start: window.start, quiet_hours_end: window.end })
    .where('id', 'in', contactIds)
    .execute();
}

async function send(contactId: string, messageType: 'MARKETING' | 'TRANSACTIONAL'): Promise<string> {
  const res = await call(srv, 'POST', '/v1/messages/send', {
    key,
    body: { contactId, messageType, content: { type: 'text', text: `A ${messageType} text` } },
  });
  expect(res.status, res.text).toBe(200);
  expect(res.body.data.status).toBe('queued'); // outside quiet hours at acceptance
  return res.body.data.messageId;
}

const messageRow = (id: string) => srv.context.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/** The message as its conversation's list shows it (GET /v1/conversations/{id}/messages). */
async function shownMessage(id: string): Promise<{ status: string; heldUntil: string | null }> {
  const { conversation_id } = await messageRow(id);
  const res = await call(srv, 'GET', `/v1/conversations/${conversation_id}/messages`, { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data.find((m: { id: string }) => m.id === id);
}

/** What reached the (simulated) carrier for the message: its calls there. */
async function carrierCalls(id: string): Promise<number> {
  const rows = await srv.context.db.selectFrom('simulator_messages').select('send_calls').where('dedupe_key', '=', id).execute();
  return rows.reduce((n, r) => n + r.send_calls, 0);
}

/** The events of one type recorded for the message, their data. */
async function messageEvents(
  type: 'message.held' | 'message.sent',
  id: string,
): Promise<Array<{ messageId: string; status: string; heldUntil: string | null }>> {
  const rows = await srv.context.db
    .selectFrom('webhook_events')
    .select('body')
    .where('organization_id', '=', org.organizationId)
    .where('type', '=', type)
    .execute();
  return rows.map((r) => JSON.parse(r.body).data).filter((d: { messageId: string }) => d.messageId === id);
}

const heldEvents = (id: string) => messageEvents('message.held', id);

/** Runs the dispatcher for a scope, as its wake job would; answers the statements it sent. */
async function dispatch(job: DispatchJob): Promise<string[]> {
  const seen: string[] = [];
  await watchingStatements(
    (s) => seen.push(s.text),
    () => dispatchBatch(srv.context, [{ data: job }]),
  );
  return seen;
}

/** Statements besides the claim that read quiet groups: the claim returns each recipient's (claimDue), so none. */
const readsQuietGroups = (statements: string[]) =>
  statements.filter((t) => t.includes('quiet_hours_start') && !t.includes('with due as')).length;

describe('quiet hours checked again at dispatch', () => {
  it('a MARKETING message whose recipient entered quiet hours while it waited goes back to held until they end, with message.held', async () => {
    const quiet = await contact(notNow());
    const awake = await contact(notNow());
    const [id, other] = [await send(quiet.id, 'MARKETING'), await send(awake.id, 'MARKETING')];
    const window = coveringNow();
    await setWindow([quiet.id], window); // it is now quiet hours for this recipient only

    const statements = await dispatch({ messageIds: [id, other] });

    const held = await messageRow(id);
    expect(held).toMatchObject({ status: 'held', attempts: 0, provider_message_id: null, sent_at: null });
    expect(held.dispatch_at).toEqual(window.endsAt);
    expect(held.held_until).toEqual(window.endsAt);
    expect(await shownMessage(id)).toMatchObject({ status: 'held', heldUntil: window.endsAt.toISOString() });
    expect(await carrierCalls(id)).toBe(0);
    expect(await heldEvents(id)).toEqual([
      expect.objectContaining({ messageId: id, status: 'held', heldUntil: window.endsAt.toISOString() }),
    ]);
    // The other recipient is not in quiet hours: sent in the same batch.
    expect(await messageRow(other)).toMatchObject({ status: 'sent', attempts: 1 });
    expect(await carrierCalls(other)).toBe(1);
    // The batch's quiet groups came with the claim: no read of their own.
    expect(readsQuietGroups(statements)).toBe(0);
    // The scope wakes again when the quiet period ends.
    const jobs = await srv.context.queue!.findJobs<DispatchJob>(DISPATCH_QUEUE, { queued: true });
    const wake = jobs.filter((j) => j.data.messageIds?.includes(id));
    expect(wake.map((j) => j.startAfter.toISOString())).toEqual([window.endsAt.toISOString()]);
  });

  it('a TRANSACTIONAL message is sent inside quiet hours, without reading them', async () => {
    const c = await contact(notNow());
    const id = await send(c.id, 'TRANSACTIONAL');
    await setWindow([c.id], coveringNow());

    const statements = await dispatch({ messageIds: [id] });

    expect(await messageRow(id)).toMatchObject({ status: 'sent', attempts: 1 });
    expect(await carrierCalls(id)).toBe(1);
    expect(await heldEvents(id)).toEqual([]);
    expect(readsQuietGroups(statements)).toBe(0); // a batch with no MARKETING message costs nothing more
  });

  it("a blast's test send is held at dispatch too, when the recipient's quiet period began while it waited", async () => {
    const c = await contact(notNow());
    const blast = await call(srv, 'POST', '/v1/blasts', {
      key,
      body: { name: 'Quiet test', senderId: org.senderId, contentJson: { type: 'text', text: 'Test' }, contactIds: [c.id] },
    });
    expect(blast.status, blast.text).toBe(201);
    expect(blast.body.messageType).toBe('MARKETING');
    const test = await call(srv, 'POST', `/v1/blasts/${blast.body.id}/test`, { key, body: { contactIds: [c.id] } });
    expect(test.status, test.text).toBe(200);
    const [result] = test.body.data.results;
    expect(result).toMatchObject({ status: 'queued', error: null });
    await setWindow([c.id], coveringNow());

    await dispatch({ messageIds: [result.messageId] });

    expect(await messageRow(result.messageId)).toMatchObject({ status: 'held', attempts: 0 });
    expect(await carrierCalls(result.messageId)).toBe(0);
    expect(await heldEvents(result.messageId)).toHaveLength(1);
  });

  it('a message held at dispatch is sent once its quiet period is over, exactly once', async () => {
    const c = await contact(notNow());
    const id = await send(c.id, 'MARKETING');
    await setWindow([c.id], coveringNow());
    await dispatch({ messageIds: [id] });
    expect(await messageRow(id)).toMatchObject({ status: 'held', attempts: 0 });
    expect(await carrierCalls(id)).toBe(0);

    // The period is over (the window moved away from now) and the message is due: its wake job runs.
    await setWindow([c.id], notNow());
    await srv.context.db.updateTable('messages').set({ dispatch_at: new Date() }).where('id', '=', id).execute();
    await dispatch({ messageIds: [id] });
    await dispatch({ messageIds: [id] }); // a repeated wake finds nothing due

    expect(await messageRow(id)).toMatchObject({ status: 'sent', attempts: 1 });
    expect(await carrierCalls(id)).toBe(1);
    expect(await heldEvents(id)).toHaveLength(1);
    // heldUntil is documented as set while the message is held: null once it is sent, here and in message.sent.
    expect(await shownMessage(id)).toMatchObject({ status: 'sent', heldUntil: null });
    expect(await messageEvents('message.sent', id)).toEqual([expect.objectContaining({ status: 'sent', heldUntil: null })]);
  });

  it("a blast batch's claim holds its recipients in quiet hours in one statement and sends the others", async () => {
    const quiet = await Promise.all(Array.from({ length: 4 }, () => contact(notNow())));
    const awake = await Promise.all(Array.from({ length: 2 }, () => contact(notNow())));
    const all = [...quiet, ...awake].map((c) => c.id);
    const blast = await call(srv, 'POST', '/v1/blasts', {
      key,
      body: { name: 'Evening sale', senderId: org.senderId, contentJson: { type: 'text', text: 'Sale' }, contactIds: all },
    });
    expect(blast.status, blast.text).toBe(201);
    expect((await call(srv, 'POST', `/v1/blasts/${blast.body.id}/send`, { key })).status).toBe(200);
    await runBatch(srv.context, { organizationId: org.organizationId, blastId: blast.body.id, batch: 0 });
    const window = coveringNow();
    await setWindow(
      quiet.map((c) => c.id),
      window,
    );

    const statements = await dispatch({
      blast: { organizationId: org.organizationId, blastId: blast.body.id, batch: 0, senderId: org.senderId },
    });

    const rows = await srv.context.db
      .selectFrom('messages')
      .select(['contact_id', 'status', 'attempts', 'dispatch_at'])
      .where('contact_id', 'in', all)
      .execute();
    const byContact = new Map(rows.map((r) => [r.contact_id, r]));
    for (const c of quiet)
      expect(byContact.get(c.id)).toEqual({ contact_id: c.id, status: 'held', attempts: 0, dispatch_at: window.endsAt });
    for (const c of awake) expect(byContact.get(c.id)).toMatchObject({ status: 'sent', attempts: 1 });
    expect(readsQuietGroups(statements)).toBe(0);
    expect(statements.filter((t) => /set status = 'held'/.test(t))).toHaveLength(1);
  });
});
