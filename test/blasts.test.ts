// Blasts through HTTP, the real database, pg-boss workers and the carrier simulator: create → content → audience
// (a segment from POST /v1/segments/resolve) → estimate (= what the sends are billed) → launch → delivery →
// progress and stats; every transition, legal and illegal; schedule and cancel; exclusions with reasons; a
// retried batch never sends twice; unknown ids; tenancy; scopes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBatch } from '../src/domain/blasts/sending.ts';
import { TRANSITIONS } from '../src/domain/blasts/transitions.ts';
import { dispatchTuning } from '../src/domain/messaging/dispatch.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { watchingStatements, type SentStatement } from './support/statements.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
let seq = 0;

beforeAll(async () => {
  dispatchTuning.backoffBaseSeconds = 0.2;
  srv = await startTestServer({ workers: true, config: { webhookAllowPrivate: true } });
  org = await srv.newOrg('Blasts org');
  key = org.apiKey.secret;
});
afterAll(() => srv.close());

/** A contact whose number ends in `suffix` (0–4: RCS handset, 5–9: SMS), tagged with a cohort attribute. */
async function contact(
  suffix: string,
  fields: { rcs_capable?: boolean | null; consent_type?: string; cohort?: string } = {},
  orgId = org.organizationId,
) {
  const phone = `+1415${String(++seq).padStart(7 - suffix.length, '0')}${suffix}`;
  return srv.context.db
    .insertInto('contacts')
    .values({
      organization_id: orgId,
      phone,
      attributes: JSON.stringify({ cohort: fields.cohort ?? 'none' }),
      rcs_capable: fields.rcs_capable === undefined ? true : fields.rcs_capable,
      consent_type: fields.consent_type ?? 'MARKETING',
      time_zone: 'UTC',
      quiet_hours_start: '23:59',
      quiet_hours_end: '00:00',
    })
    .returning(['id', 'phone'])
    .executeTakeFirstOrThrow();
}

const text = (t: string) => ({ type: 'text' as const, text: t });

async function segmentFor(cohort: string, k = key): Promise<string> {
  const res = await call(srv, 'POST', '/v1/segments/resolve', {
    key: k,
    body: { conditions: [{ type: 'attribute', attribute: 'cohort', op: 'eq', value: cohort }] },
  });
  expect(res.status).toBe(200);
  return res.body.data.segmentId;
}

async function createBlast(body: Record<string, unknown>, k = key) {
  return call(srv, 'POST', '/v1/blasts', { key: k, body: { name: 'Sale', senderId: org.senderId, ...body } });
}

async function waitStatus(id: string, statuses: string[], timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(srv, 'GET', `/v1/blasts/${id}`, { key });
    if (statuses.includes(res.body.status)) return res.body;
    if (Date.now() > deadline) throw new Error(`blast ${id} is ${res.body.status}, expected ${statuses.join('/')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function blastMessages(blastId: string) {
  return srv.context.db
    .selectFrom('blast_recipients as r')
    .innerJoin('messages as m', 'm.id', 'r.message_id')
    .select(['m.id', 'm.status', 'm.cost_units', 'm.contact_id', 'r.variant_key'])
    .where('r.blast_id', '=', blastId)
    .execute();
}

const GSM_310 = 'A'.repeat(310); // 3 segments (153 per part)
const UCS2_100 = 'Grüße 😀 '.repeat(10).slice(0, 100); // UCS-2: 2 segments (67 per part)

describe('a blast from draft to SENT', () => {
  it('segment audience ∪ contact ids; estimate equals the bill (310-char GSM-7 and UCS-2); progress and stats add up', async () => {
    const rcs = [await contact('1', { cohort: 'vip' }), await contact('2', { cohort: 'vip' })];
    const sms = await contact('6', { cohort: 'vip', rcs_capable: false });
    const optedOut = await contact('3', { cohort: 'vip' });
    await srv.context.db
      .insertInto('opt_outs')
      .values({ organization_id: org.organizationId, phone: optedOut.phone, source: 'KEYWORD', keyword: 'STOP', opted_out_at: new Date() })
      .execute();
    const extra = await contact('4');
    const segmentId = await segmentFor('vip');

    const created = await createBlast({ contentJson: text('draft'), contactIds: [extra.id] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: 'DRAFT',
      contentSource: 'content',
      contactIdCount: 1,
      recipientCount: null,
      messageType: 'MARKETING',
      fallbackToSms: true,
    });
    const id = created.body.id;

    const content = await call(srv, 'PUT', `/v1/blasts/${id}/content`, { key, body: { contentJson: text(GSM_310) } });
    expect(content.status).toBe(200);
    expect(content.body.contentJson).toEqual(text(GSM_310));

    const audience = await call(srv, 'PUT', `/v1/blasts/${id}/audience`, { key, body: { segmentId, contactIds: [extra.id, rcs[0]!.id] } });
    expect(audience.status).toBe(200);
    expect(audience.body.data).toMatchObject({ blastId: id, segmentId, recipientCount: 5 });

    const est = await call(srv, 'GET', `/v1/blasts/${id}/estimate`, { key });
    expect(est.status).toBe(200);
    expect(est.body.data.audience).toEqual({
      total: 6,
      eligible: 4,
      excluded: { total: 2, optedOut: 1, dnc: 0, noConsent: 0, invalidPhone: 0, noChannel: 0, sessionClosed: 0, duplicate: 1 },
      inQuietHours: 0,
      heldUntil: null,
    });
    // 4 recipients × 3 segments × 0.0039
    expect(est.body.data.totalCost).toEqual({ amount: '0.0468', currency: 'USD' });
    expect(est.body.data.byChannel).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ channel: 'RCS', billingUnit: 'textSegment', recipients: 3, units: 9 }),
        expect.objectContaining({ channel: 'SMS', billingUnit: 'textSegment', recipients: 1, units: 3 }),
      ]),
    );

    const launch = await call(srv, 'POST', `/v1/blasts/${id}/launch`, { key });
    expect(launch.status).toBe(200);
    expect(launch.body.data).toMatchObject({
      previousStatus: 'DRAFT',
      status: 'SENDING',
      scheduledAt: null,
      // Started now: the audience is resolved batch by batch as it sends, not counted at launch (the estimate above
      // gave the figures; the bill below equals it).
      recipientCount: null,
      estimatedCost: null,
    });

    const done = await waitStatus(id, ['SENT']);
    expect(done.dispatchedAt).not.toBeNull();
    expect(done.completedAt).not.toBeNull();
    const msgs = await blastMessages(id);
    expect(msgs).toHaveLength(4);
    expect(msgs.reduce((s, m) => s + (m.cost_units ?? 0), 0)).toBe(468); // the bill equals the estimate
    expect(msgs.map((m) => m.contact_id).sort()).toEqual([...rcs.map((c) => c.id), sms.id, extra.id].sort());

    const progress = await call(srv, 'GET', `/v1/blasts/${id}/progress`, { key });
    expect(progress.status).toBe(200);
    const p = progress.body.data;
    expect(p).toMatchObject({
      status: 'SENT',
      totalRecipients: 4,
      skipped: 1,
      cancelled: 0,
      pendingRecipients: 0,
      audienceResolved: true,
      percentDispatched: 100,
      percentComplete: 100,
    });
    expect(p.counts.delivered + p.counts.read).toBe(4);

    const stats = await call(srv, 'GET', `/v1/blasts/${id}/stats`, { key });
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({
      recipients: 4,
      sent: 4,
      delivered: 4,
      failed: 0,
      fallbacks: 1,
      cost: { amount: '0.0468', currency: 'USD' },
      byVariant: null,
    });
    expect(stats.body.rates.delivery).toBe(1);
    // an opt-out after the message counts in stats (within 7 days)
    await srv.context.db
      .insertInto('opt_outs')
      .values({ organization_id: org.organizationId, phone: rcs[1]!.phone, source: 'KEYWORD', keyword: 'STOP', opted_out_at: new Date() })
      .execute();
    const after = (await call(srv, 'GET', `/v1/blasts/${id}/stats`, { key })).body;
    expect(after).toMatchObject({ optOuts: 1, replies: 0 });
    expect(after.rates.optOut).toBe(0.25);

    const detail = await call(srv, 'GET', `/v1/blasts/${id}`, { key });
    expect(detail.body).toMatchObject({ status: 'SENT', contactIds: [extra.id, rcs[0]!.id], allowedActions: ['test'], recipientCount: 4 });
    expect(detail.body.progress.totalRecipients).toBe(4);
  });

  it('UCS-2 text: the estimate equals the stored cost', async () => {
    const a = await contact('1');
    const b = await contact('7', { rcs_capable: false });
    const id = (await createBlast({ contentJson: text(UCS2_100), contactIds: [a.id, b.id], messageType: 'TRANSACTIONAL' })).body.id;
    const est = await call(srv, 'GET', `/v1/blasts/${id}/estimate`, { key });
    expect(est.body.data.totalCost).toEqual({ amount: '0.0156', currency: 'USD' }); // 2 × 2 segments × 0.0039
    expect((await call(srv, 'POST', `/v1/blasts/${id}/send`, { key })).body.data).toMatchObject({
      previousStatus: 'DRAFT',
      status: 'SENDING',
    });
    await waitStatus(id, ['SENT']);
    const msgs = await blastMessages(id);
    expect(msgs.reduce((s, m) => s + (m.cost_units ?? 0), 0)).toBe(156);
  });

  it('A/B variants split by weight, per variant in stats; a DNC and a no-consent contact are skipped with their reasons', async () => {
    const cs = await Promise.all(Array.from({ length: 8 }, () => contact('1')));
    const dnc = await contact('2');
    const noConsent = await contact('4', { consent_type: 'NONE' });
    await srv.context.db
      .insertInto('dnc_entries')
      .values({ organization_id: org.organizationId, phone: dnc.phone, reason: 'asked', source: 'API', actor: null })
      .execute();
    const variants = [
      { key: 'A', weight: 50, content: text('Variant A') },
      { key: 'B', weight: 50, content: { type: 'card', card: { title: 'Sale', mediaUrl: 'https://cdn.example.com/a.jpg' } } },
    ];
    const id = (await createBlast({ variants, contactIds: [...cs.map((c) => c.id), dnc.id, noConsent.id] })).body.id;
    const est = (await call(srv, 'GET', `/v1/blasts/${id}/estimate`, { key })).body.data;
    expect(est.audience.excluded).toMatchObject({ total: 2, dnc: 1, noConsent: 1 });
    expect((await call(srv, 'POST', `/v1/blasts/${id}/launch`, { key })).status).toBe(200);
    await waitStatus(id, ['SENT']);
    const msgs = await blastMessages(id);
    expect(msgs).toHaveLength(8);
    const stats = (await call(srv, 'GET', `/v1/blasts/${id}/stats`, { key })).body;
    const byKey = Object.fromEntries(stats.byVariant.map((v: { key: string }) => [v.key, v]));
    expect((byKey.A?.recipients ?? 0) + (byKey.B?.recipients ?? 0)).toBe(8);
    expect(stats.cost.amount).toBe(est.totalCost.amount);
    const reasons = await srv.context.db
      .selectFrom('blast_recipients')
      .select(['contact_id', 'status', 'skip_reason'])
      .where('blast_id', '=', id)
      .where('status', '=', 'skipped')
      .execute();
    expect(reasons.map((r) => [r.contact_id, r.skip_reason]).sort()).toEqual(
      [
        [dnc.id, 'DNC_LISTED'],
        [noConsent.id, 'NO_CONSENT'],
      ].sort(),
    );
    const progress = (await call(srv, 'GET', `/v1/blasts/${id}/progress`, { key })).body.data;
    expect(progress).toMatchObject({ skipped: 2, skippedByReason: { DNC_LISTED: 1, NO_CONSENT: 1 } });
    expect(Object.keys(progress.skippedByReason)).toHaveLength(2);
  });
});

describe('blast.status_changed', () => {
  it('is emitted on every change: (none) → DRAFT → SENDING → DISPATCHED → SENT', async () => {
    const ep = await call(srv, 'POST', '/v1/webhook-endpoints', {
      key,
      body: { url: 'http://127.0.0.1:9/hooks', events: ['blast.status_changed'] },
    });
    expect(ep.status).toBe(201);
    const c = await contact('1');
    const id = (await createBlast({ contentJson: text('events'), contactIds: [c.id] })).body.id;
    await call(srv, 'POST', `/v1/blasts/${id}/send`, { key });
    await waitStatus(id, ['SENT']);
    const rows = await srv.context.db
      .selectFrom('webhook_events')
      .select(['body', 'created_at'])
      .where('organization_id', '=', org.organizationId)
      .where('type', '=', 'blast.status_changed')
      .orderBy('created_at')
      .execute();
    const changes = rows
      .map((r) => JSON.parse(r.body).data)
      .filter((d) => d.blastId === id)
      .map((d) => `${d.previousStatus}→${d.status}`);
    expect(changes).toEqual(['null→DRAFT', 'DRAFT→SENDING', 'SENDING→DISPATCHED', 'DISPATCHED→SENT']);
    await call(srv, 'DELETE', `/v1/webhook-endpoints/${ep.body.data.id}`, { key });
  });
});

describe('the transition table', () => {
  it('is the document’s', () => {
    expect(TRANSITIONS.cancel.from).toEqual(['SCHEDULED', 'SENDING', 'DISPATCHED']);
    expect(TRANSITIONS.delete.from).toEqual(['DRAFT']);
    expect(TRANSITIONS.update.from).toEqual(['DRAFT', 'SCHEDULED']);
    expect(TRANSITIONS.send.from).toEqual(['DRAFT', 'SCHEDULED']);
  });

  it('illegal transitions answer 409 INVALID_STATE naming the state', async () => {
    const c = await contact('1');
    const id = (await createBlast({ contentJson: text('hi'), contactIds: [c.id] })).body.id;
    const cancelDraft = await call(srv, 'POST', `/v1/blasts/${id}/cancel`, { key });
    expect(cancelDraft.status).toBe(409);
    expect(cancelDraft.body.code).toBe('INVALID_STATE');
    expect(cancelDraft.body.message).toContain('DRAFT');
    expect((await call(srv, 'POST', `/v1/blasts/${id}/send`, { key })).status).toBe(200);
    await waitStatus(id, ['SENT']);
    for (const [method, path, body] of [
      ['PUT', '', { name: 'x' }],
      ['PUT', '/content', { contentJson: text('x') }],
      ['PUT', '/audience', { contactIds: [c.id] }],
      ['DELETE', '', undefined],
      ['POST', '/launch', undefined],
      ['POST', '/send', undefined],
      ['POST', '/schedule', { scheduledAt: new Date(Date.now() + 3600_000).toISOString() }],
      ['POST', '/cancel', undefined],
    ] as const) {
      const res = await call(srv, method, `/v1/blasts/${id}${path}`, { key, body });
      expect(res.status, `${method} ${path}`).toBe(409);
      expect(res.body.code).toBe('INVALID_STATE');
      expect(res.body.message).toContain('SENT');
    }
  });

  it('schedule → reschedule → cancel (CANCELLED is final); a draft is deleted', async () => {
    const c = await contact('1');
    const id = (await createBlast({ contentJson: text('later'), contactIds: [c.id] })).body.id;
    const past = await call(srv, 'POST', `/v1/blasts/${id}/schedule`, {
      key,
      body: { scheduledAt: new Date(Date.now() - 1000).toISOString() },
    });
    expect(past.status).toBe(400);
    const at = new Date(Date.now() + 3600_000).toISOString();
    const sched = await call(srv, 'POST', `/v1/blasts/${id}/schedule`, { key, body: { scheduledAt: at } });
    expect(sched.status).toBe(200);
    expect(sched.body.data).toMatchObject({ previousStatus: 'DRAFT', status: 'SCHEDULED', scheduledAt: at });
    const upd = await call(srv, 'PUT', `/v1/blasts/${id}`, { key, body: { scheduledAt: null } });
    expect(upd.status).toBe(400);
    expect((await call(srv, 'DELETE', `/v1/blasts/${id}`, { key })).status).toBe(409);
    const cancel = await call(srv, 'POST', `/v1/blasts/${id}/cancel`, { key });
    expect(cancel.body.data).toMatchObject({ previousStatus: 'SCHEDULED', status: 'CANCELLED' });
    expect((await call(srv, 'POST', `/v1/blasts/${id}/send`, { key })).status).toBe(409);
    expect((await call(srv, 'GET', `/v1/blasts/${id}`, { key })).body).toMatchObject({ status: 'CANCELLED', allowedActions: ['test'] });

    const draft = (await createBlast({ contentJson: text('bye'), contactIds: [c.id] })).body.id;
    const del = await call(srv, 'DELETE', `/v1/blasts/${draft}`, { key });
    expect(del.status, del.text).toBe(204);
    expect((await call(srv, 'GET', `/v1/blasts/${draft}`, { key })).status).toBe(404);
  });

  it('launch with a near scheduledAt schedules, then the scheduled start sends it', async () => {
    const c = await contact('1');
    const at = new Date(Date.now() + 1500);
    const id = (await createBlast({ contentJson: text('soon'), contactIds: [c.id], scheduledAt: at.toISOString() })).body.id;
    const launch = await call(srv, 'POST', `/v1/blasts/${id}/launch`, { key });
    expect(launch.body.data).toMatchObject({ status: 'SCHEDULED', scheduledAt: at.toISOString(), recipientCount: 1 });
    const done = await waitStatus(id, ['SENT']);
    expect(done.launchedAt).not.toBeNull();
  });

  it('a scheduled start whose audience is no longer eligible moves to FAILED with the reason', async () => {
    const c = await contact('1');
    const id = (await createBlast({ contentJson: text('gone'), contactIds: [c.id] })).body.id;
    const at = new Date(Date.now() + 1500).toISOString();
    expect((await call(srv, 'POST', `/v1/blasts/${id}/schedule`, { key, body: { scheduledAt: at } })).status).toBe(200);
    await srv.context.db
      .insertInto('opt_outs')
      .values({ organization_id: org.organizationId, phone: c.phone, source: 'KEYWORD', keyword: 'STOP', opted_out_at: new Date() })
      .execute();
    const failed = await waitStatus(id, ['FAILED']);
    expect(failed.failureReason).toMatchObject({ code: 'NO_ELIGIBLE_RECIPIENTS' });
    expect(failed.completedAt).not.toBeNull();
  });

  it('a blast with no eligible recipient cannot launch (422)', async () => {
    const c = await contact('1', { consent_type: 'NONE' });
    const id = (await createBlast({ contentJson: text('no'), contactIds: [c.id] })).body.id;
    const res = await call(srv, 'POST', `/v1/blasts/${id}/launch`, { key });
    expect(res.status).toBe(422);
    expect((await call(srv, 'GET', `/v1/blasts/${id}`, { key })).body.status).toBe('DRAFT');
  });
});

describe('exactly once', () => {
  it('running the same batch again (a retry) or twice at once never sends twice', async () => {
    const cs = await Promise.all(Array.from({ length: 5 }, () => contact('1')));
    const id = (await createBlast({ contentJson: text('once'), contactIds: cs.map((c) => c.id) })).body.id;
    expect((await call(srv, 'POST', `/v1/blasts/${id}/send`, { key })).status).toBe(200);
    const job = { organizationId: org.organizationId, blastId: id, batch: 0 };
    await Promise.all([runBatch(srv.context, job), runBatch(srv.context, job)]);
    await runBatch(srv.context, job);
    await waitStatus(id, ['SENT']);
    const msgs = await blastMessages(id);
    expect(msgs).toHaveLength(5);
    const all = await srv.context.db
      .selectFrom('messages')
      .select('contact_id')
      .where(
        'contact_id',
        'in',
        cs.map((c) => c.id),
      )
      .execute();
    expect(all).toHaveLength(5);
  });
});

describe("a sender's rate", () => {
  it('each message is claimed once: what the window cannot take stays queued until it opens, never claimed and put back', async () => {
    const slow = await srv.context.db
      .insertInto('sender_ids')
      .values({
        organization_id: org.organizationId,
        name: 'Slow blaster',
        type: 'LONG_CODE',
        status: 'ACTIVE',
        provider: 'PROVIDER_A',
        phone_number: `+1500${String(Date.now()).slice(-7)}`,
        is_sandbox: true,
        throughput_per_second: 4,
        updated_at: new Date(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    for (let i = 0; i < 12; i++) await contact('6', { rcs_capable: false, cohort: 'rate' });
    const { body } = await createBlast({ senderId: slow.id, contentJson: text('At four a second'), segmentId: await segmentFor('rate') });
    // Rows each dispatch claim returns, counted at the driver.
    let claimed = 0;
    const countClaimed = ({ text, result }: SentStatement) => {
      if (/with due as/.test(text) && result instanceof Promise)
        void result.then(
          (r: { rowCount?: number | null }) => (claimed += r?.rowCount ?? 0),
          () => {},
        );
    };
    await watchingStatements(countClaimed, async () => {
      expect((await call(srv, 'POST', `/v1/blasts/${body.id}/launch`, { key })).status).toBe(200);
      await waitStatus(body.id, ['SENT'], 30_000);
    });
    const sent = await srv.context.db
      .selectFrom('blast_recipients as r')
      .innerJoin('messages as m', 'm.id', 'r.message_id')
      .select('m.sent_at')
      .where('r.blast_id', '=', body.id)
      .execute();
    expect(sent).toHaveLength(12); // all of them, none dropped
    expect(claimed).toBe(12);
    // 12 messages at 4 per one-second window need at least three windows.
    const times = sent.map((m) => m.sent_at!.getTime()).sort((a, b) => a - b);
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(1500);
  });
});

describe('test sends', () => {
  it('are held inside the recipient’s quiet hours, as the blast sent for real would be (MARKETING); TRANSACTIONAL goes now', async () => {
    // A quiet period (UTC) around the real clock: it began an hour ago and ends in two hours.
    // One base minute for the whole test: read twice, the clock could cross a minute between the two (60 s off).
    const base = Math.floor(Date.now() / 60_000) * 60_000;
    const minute = (offset: number) => new Date(base + offset * 60_000);
    const hhmm = (d: Date) => d.toISOString().slice(11, 16);
    const quiet = await srv.context.db
      .insertInto('contacts')
      .values({
        organization_id: org.organizationId,
        phone: '+14155558811',
        attributes: '{}',
        rcs_capable: true,
        consent_type: 'MARKETING',
        time_zone: 'UTC',
        quiet_hours_start: hhmm(minute(-60)),
        quiet_hours_end: hhmm(minute(120)),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const marketing = (await createBlast({ contentJson: text('test in quiet hours'), contactIds: [quiet.id] })).body.id;
    const res = await call(srv, 'POST', `/v1/blasts/${marketing}/test`, { key, body: { contactIds: [quiet.id] } });
    expect(res.status).toBe(200);
    const [held] = res.body.data.results;
    expect(held).toMatchObject({ contactId: quiet.id, status: 'held', error: null });
    const message = await call(
      srv,
      'GET',
      `/v1/conversations/${(await srv.context.db.selectFrom('messages').select('conversation_id').where('id', '=', held.messageId).executeTakeFirstOrThrow()).conversation_id}/messages`,
      { key },
    );
    const stored = message.body.data.find((m: { id: string }) => m.id === held.messageId);
    expect(stored.status).toBe('held');
    expect(Date.parse(stored.heldUntil)).toBe(minute(120).getTime()); // when the quiet period ends
    const transactional = (await createBlast({ contentJson: text('notice'), contactIds: [quiet.id], messageType: 'TRANSACTIONAL' })).body
      .id;
    const notice = await call(srv, 'POST', `/v1/blasts/${transactional}/test`, { key, body: { contactIds: [quiet.id] } });
    expect(notice.body.data.results[0]).toMatchObject({ contactId: quiet.id, status: 'queued', error: null });
  });

  it('sends to phones and contacts, reporting refusals; more than 10 is 400', async () => {
    const ok = await contact('1');
    const opted = await contact('2');
    await srv.context.db
      .insertInto('opt_outs')
      .values({ organization_id: org.organizationId, phone: opted.phone, source: 'KEYWORD', keyword: 'STOP', opted_out_at: new Date() })
      .execute();
    const id = (await createBlast({ contentJson: text('test'), contactIds: [ok.id], messageType: 'TRANSACTIONAL' })).body.id;
    const res = await call(srv, 'POST', `/v1/blasts/${id}/test`, {
      key,
      body: { phones: ['+14155559001'], contactIds: [ok.id, opted.id] },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.variantKey).toBeNull();
    const [p, a, b] = res.body.data.results;
    expect(p).toMatchObject({ phone: '+14155559001', contactId: null, status: 'queued', error: null });
    expect(a).toMatchObject({ contactId: ok.id, status: 'queued', error: null });
    expect(b).toMatchObject({ contactId: opted.id, messageId: null, status: null, error: { code: 'OPTED_OUT' } });
    expect((await call(srv, 'GET', `/v1/blasts/${id}`, { key })).body.status).toBe('DRAFT');
    const many = Array.from({ length: 11 }, (_, i) => `+1415555${String(9100 + i)}`);
    expect(
      (await call(srv, 'POST', `/v1/blasts/${id}/test`, { key, body: { phones: many.slice(0, 10), contactIds: [ok.id] } })).status,
    ).toBe(400);
  });
});

describe('bad input, unknown ids, tenancy, scopes', () => {
  it('validation: two content sources, no audience, weights not 100', async () => {
    const c = await contact('1');
    expect(
      (
        await createBlast({
          contentJson: text('a'),
          variants: [
            { key: 'A', weight: 50, content: text('a') },
            { key: 'B', weight: 50, content: text('b') },
          ],
          contactIds: [c.id],
        })
      ).status,
    ).toBe(400);
    expect((await createBlast({ contentJson: text('a') })).status).toBe(400);
    const bad = await createBlast({
      variants: [
        { key: 'A', weight: 50, content: text('a') },
        { key: 'B', weight: 40, content: text('b') },
      ],
      contactIds: [c.id],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].field).toBe('body.variants');
  });

  it('unknown ids answer 404 naming each field; nothing is created', async () => {
    const c = await contact('1');
    const other = await srv.newOrg('Other org');
    const foreign = await contact('1', {}, other.organizationId);
    const missing = '00000000-0000-4000-8000-000000000000';
    const res = await createBlast({ contentJson: text('x'), contactIds: [c.id, foreign.id], segmentId: missing });
    expect(res.status).toBe(404);
    expect(res.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['body.contactIds.1', 'body.segmentId']);
    const sender = await createBlast({ contentJson: text('x'), contactIds: [c.id], senderId: missing });
    expect(sender.status).toBe(404);
    expect(sender.body.details[0].field).toBe('body.senderId');
    const id = (await createBlast({ contentJson: text('x'), contactIds: [c.id] })).body.id;
    const aud = await call(srv, 'PUT', `/v1/blasts/${id}/audience`, { key, body: { contactIds: [missing] } });
    expect(aud.status).toBe(404);
    expect(aud.body.details[0].field).toBe('body.contactIds.0');
  });

  it('another organization’s blast is 404 everywhere; a key without blasts:send gets 403', async () => {
    const c = await contact('1');
    const id = (await createBlast({ contentJson: text('x'), contactIds: [c.id] })).body.id;
    const other = await srv.newOrg('Tenant wall');
    for (const [method, path] of [
      ['GET', ''],
      ['GET', '/estimate'],
      ['GET', '/progress'],
      ['GET', '/stats'],
      ['POST', '/launch'],
      ['POST', '/cancel'],
      ['DELETE', ''],
    ] as const) {
      expect((await call(srv, method, `/v1/blasts/${id}${path}`, { key: other.apiKey.secret })).status, `${method} ${path}`).toBe(404);
    }
    expect((await call(srv, 'GET', '/v1/blasts', { key: other.apiKey.secret })).body.pagination.total).toBe(0);
    const readOnly = await srv.newKey(org.organizationId, ['blasts:read']);
    expect((await call(srv, 'POST', `/v1/blasts/${id}/launch`, { key: readOnly.secret })).status).toBe(403);
    const list = await call(srv, 'GET', '/v1/blasts?status=DRAFT', { key: readOnly.secret });
    expect(list.status).toBe(200);
    expect(list.body.data.every((b: { status: string }) => b.status === 'DRAFT')).toBe(true);
  });
});

describe('cancel mid-send', () => {
  it('withdraws messages held for quiet hours and counts them cancelled', async () => {
    const quiet = await srv.context.db
      .insertInto('contacts')
      .values({
        organization_id: org.organizationId,
        phone: '+14155558801',
        attributes: '{}',
        rcs_capable: true,
        consent_type: 'MARKETING',
        time_zone: 'UTC',
        quiet_hours_start: '00:00',
        quiet_hours_end: '23:59',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const id = (await createBlast({ contentJson: text('held'), contactIds: [quiet.id] })).body.id;
    expect((await call(srv, 'POST', `/v1/blasts/${id}/send`, { key })).status).toBe(200);
    await waitStatus(id, ['DISPATCHED']);
    const cancel = await call(srv, 'POST', `/v1/blasts/${id}/cancel`, { key });
    expect(cancel.body.data).toMatchObject({ previousStatus: 'DISPATCHED', status: 'CANCELLED' });
    const p = (await call(srv, 'GET', `/v1/blasts/${id}/progress`, { key })).body.data;
    expect(p).toMatchObject({ status: 'CANCELLED', cancelled: 1, totalRecipients: 0 });
  });
});
