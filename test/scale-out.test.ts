// How users run it for real: several API and worker processes on one database. Each message reaches the
// handset exactly once — even when a worker dies between handing a message to the provider and recording it,
// and when retries with the same Idempotency-Key land on different API processes.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
/** This file's job queue, shared by its server and the processes it starts (and by no other test file). */
const QUEUE_SCHEMA = 'pgboss_scale_out';
const children: ChildProcess[] = [];

beforeAll(async () => {
  srv = await startTestServer({ workers: false, queueSchema: QUEUE_SCHEMA });
});
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await srv.close();
});

function start(entry: 'src/main.js' | 'src/worker.js', env: Record<string, string>): Promise<{ child: ChildProcess; port?: number }> {
  const child = spawn(process.execPath, [entry], {
    env: {
      ...process.env,
      DATABASE_URL: inject('databaseUrl'),
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      QUEUE_SUPERVISE_SECONDS: '1',
      PORT: '0',
      QUEUE_SCHEMA,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let log = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry} did not start:\n${log}`)), 30_000);
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      const listening = /listening on http:\/\/localhost:(\d+)/.exec(log);
      if (listening || log.includes('worker started')) {
        clearTimeout(timer);
        resolve({ child, port: listening ? Number(listening[1]) : undefined });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (!log.includes('worker started') && !/listening on/.test(log)) reject(new Error(`${entry} exited ${code}:\n${log}`));
    });
  });
}

async function contacts(orgId: string, n: number, prefix: string) {
  const rows = Array.from({ length: n }, (_, i) => ({
    organization_id: orgId,
    phone: `+1628${prefix}${String(i).padStart(4, '0')}6`,
    attributes: '{}',
    rcs_capable: false,
    consent_type: 'MARKETING',
  }));
  return srv.context.db.insertInto('contacts').values(rows).returning(['id', 'phone']).execute();
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('exactly once to the handset', () => {
  it('a worker killed between the provider send and the record: the restarted worker sends each message once', async () => {
    const org = await srv.newOrg('Crash org');
    const list = await contacts(org.organizationId, 12, '10');
    const ids: string[] = [];
    for (const c of list) {
      const res = await call(srv, 'POST', '/v1/messages/send', {
        key: org.apiKey.secret,
        body: { contactId: c.id, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'crash test' } },
      });
      expect(res.status).toBe(200);
      ids.push(res.body.data.messageId);
    }

    const crashing = await start('src/worker.js', { MSA_FAULT: 'crash-after-provider-send', CALLBACK_BASE_URL: srv.baseUrl });
    const code = await new Promise((r) => crashing.child.on('exit', r));
    expect(code).toBe(137);
    const reachedHandset = await srv.context.db
      .selectFrom('simulator_messages')
      .select('dedupe_key')
      .where('dedupe_key', 'in', ids)
      .execute();
    expect(reachedHandset.length).toBeGreaterThan(0); // it did hand messages over before dying …
    const unrecorded = await srv.context.db
      .selectFrom('messages')
      .select('id')
      .where('id', 'in', ids)
      .where('status', '=', 'sending')
      .execute();
    expect(unrecorded.length).toBeGreaterThan(0); // … without recording them

    await start('src/worker.js', { CALLBACK_BASE_URL: srv.baseUrl });
    await waitFor('every message sent', async () => {
      const pending = await srv.context.db
        .selectFrom('messages')
        .select('id')
        .where('id', 'in', ids)
        .where('status', 'in', ['queued', 'sending'])
        .execute();
      return pending.length === 0 ? true : undefined;
    });
    const handset = await srv.context.db
      .selectFrom('simulator_messages')
      .select(['dedupe_key', 'send_calls', 'provider_message_id'])
      .where('dedupe_key', 'in', ids)
      .execute();
    expect(handset).toHaveLength(ids.length); // one per message: nothing twice
    // Whether a message was sent again (and absorbed by the dedupe key) or settled first by its receipt depends
    // on timing; test/conversations-messages.test.ts checks the repeated send itself.
    const recorded = await srv.context.db.selectFrom('messages').select(['id', 'provider_message_id']).where('id', 'in', ids).execute();
    for (const m of recorded) expect(m.provider_message_id).toBe(handset.find((h) => h.dedupe_key === m.id)!.provider_message_id);
  }, 120_000);

  it('two API processes and two workers: idempotent retries spread across both APIs send each message once', async () => {
    const [api1, api2] = await Promise.all([start('src/main.js', { RUN_WORKERS: '0' }), start('src/main.js', { RUN_WORKERS: '0' })]);
    const callback = `http://127.0.0.1:${api1.port}`;
    await Promise.all([start('src/worker.js', { CALLBACK_BASE_URL: callback }), start('src/worker.js', { CALLBACK_BASE_URL: callback })]);
    const org = await srv.newOrg('Scale-out org');
    const list = await contacts(org.organizationId, 20, '20');
    const apis = [api1.port!, api2.port!];
    const answers = await Promise.all(
      list.flatMap((c, i) =>
        apis.map(async (port) => {
          // A client retries 409 IDEMPOTENCY_IN_PROGRESS (the same key still running in the other process).
          for (;;) {
            const res = await fetch(`http://127.0.0.1:${port}/v1/messages/send`, {
              method: 'POST',
              headers: {
                authorization: `Bearer ${org.apiKey.secret}`,
                'content-type': 'application/json',
                'idempotency-key': `scale-${i}`,
              },
              body: JSON.stringify({ contactId: c.id, messageType: 'TRANSACTIONAL', content: { type: 'text', text: `hello ${i}` } }),
            });
            const body = (await res.json()) as { code?: string; data: { messageId: string } };
            if (res.status === 409 && body.code === 'IDEMPOTENCY_IN_PROGRESS') {
              await new Promise((r) => setTimeout(r, 20));
              continue;
            }
            return { i, status: res.status, body };
          }
        }),
      ),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    for (let i = 0; i < list.length; i++) {
      const pair = answers.filter((a) => a.i === i);
      expect(pair[0]!.body.data.messageId).toBe(pair[1]!.body.data.messageId);
    }
    const ids = [...new Set(answers.map((a) => a.body.data.messageId))];
    expect(ids).toHaveLength(list.length);
    await waitFor('every message delivered', async () => {
      const rows = await srv.context.db.selectFrom('messages').select('status').where('id', 'in', ids).execute();
      return rows.every((r) => r.status === 'delivered') ? true : undefined;
    });
    const handset = await srv.context.db
      .selectFrom('simulator_messages')
      .select('dedupe_key')
      .where('organization_id', '=', org.organizationId)
      .execute();
    expect(handset).toHaveLength(list.length);
    const stored = await srv.context.db.selectFrom('messages').select('id').where('organization_id', '=', org.organizationId).execute();
    expect(stored).toHaveLength(list.length);
  }, 120_000);

  it('a blast whose worker is killed mid-send: the restarted worker reaches each recipient once', async () => {
    // Only the workers of this test: the earlier ones stop first.
    await Promise.all(
      children
        .splice(0)
        .map((c) =>
          c.exitCode !== null || c.signalCode !== null ? undefined : new Promise((r) => (c.once('exit', r), c.kill('SIGTERM'))),
        ),
    );
    const org = await srv.newOrg('Blast crash org');
    const list = await contacts(org.organizationId, 30, '30');
    const created = await call(srv, 'POST', '/v1/blasts', {
      key: org.apiKey.secret,
      body: {
        name: 'Crash blast',
        senderId: org.senderId,
        messageType: 'TRANSACTIONAL',
        contentJson: { type: 'text', text: 'blast crash test' },
        contactIds: list.map((c) => c.id),
      },
    });
    expect(created.status).toBe(201);
    expect((await call(srv, 'POST', `/v1/blasts/${created.body.id}/launch`, { key: org.apiKey.secret, body: {} })).status).toBe(200);

    const crashing = await start('src/worker.js', { MSA_FAULT: 'crash-after-provider-send', CALLBACK_BASE_URL: srv.baseUrl });
    expect(await new Promise((r) => crashing.child.on('exit', r))).toBe(137);
    const blastMessages = () =>
      srv.context.db
        .selectFrom('blast_recipients as r')
        .innerJoin('messages as m', 'm.id', 'r.message_id')
        .select(['m.id', 'm.status', 'm.provider_message_id'])
        .where('r.blast_id', '=', created.body.id)
        .execute();
    const accepted = await blastMessages();
    expect(accepted).toHaveLength(list.length); // the batch was accepted before the crash …
    expect(accepted.filter((m) => m.status === 'sending').length).toBeGreaterThan(0); // … and handed over unrecorded

    await start('src/worker.js', { CALLBACK_BASE_URL: srv.baseUrl });
    await waitFor('every blast message sent', async () =>
      (await blastMessages()).every((m) => !['queued', 'sending'].includes(m.status)) ? true : undefined,
    );
    const ids = accepted.map((m) => m.id);
    const handset = await srv.context.db
      .selectFrom('simulator_messages')
      .select(['dedupe_key', 'provider_message_id'])
      .where('dedupe_key', 'in', ids)
      .execute();
    expect(handset).toHaveLength(list.length); // one per recipient: nothing twice
    for (const m of await blastMessages())
      expect(m.provider_message_id).toBe(handset.find((h) => h.dedupe_key === m.id)!.provider_message_id);
  }, 120_000);

  it('a message found without RCS at dispatch carries its fallback plan before it is handed over', async () => {
    // A carrier's receipt can come back before the dispatcher records the provider's acceptance (the simulator's
    // and Twilio's callbacks can): the message it finds must already say that its SMS fallback carries it, and
    // why, or `message.delivered` announces `fallbackUsed: false`. A worker killed between the send and the record
    // leaves the message as such a receipt finds it.
    // The workers the tests above left running would dispatch these messages themselves: only the crashing one may.
    for (const c of children) c.kill('SIGKILL');
    const org = await srv.newOrg('Plan before send org');
    const rows = Array.from({ length: 4 }, (_, i) => ({
      organization_id: org.organizationId,
      phone: `+1628301${String(i).padStart(3, '0')}7`, // last digit 7: no RCS on the simulator
      attributes: '{}',
      rcs_capable: null, // unknown: dispatch asks the carrier
      consent_type: 'MARKETING',
    }));
    const list = await srv.context.db.insertInto('contacts').values(rows).returning('id').execute();
    const ids: string[] = [];
    for (const c of list) {
      const res = await call(srv, 'POST', '/v1/messages/send', {
        key: org.apiKey.secret,
        body: { contactId: c.id, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'plan test' } },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.fallbackReason).toBeNull(); // planned on RCS: the capability is not known yet
      ids.push(res.body.data.messageId);
    }
    const crashing = await start('src/worker.js', { MSA_FAULT: 'crash-after-provider-send', CALLBACK_BASE_URL: srv.baseUrl });
    expect(await new Promise((r) => crashing.child.on('exit', r))).toBe(137);
    const unrecorded = await srv.context.db
      .selectFrom('messages')
      .select(['status', 'planned_channel', 'fallback_used', 'fallback_reason'])
      .where('id', 'in', ids)
      .where('status', '=', 'sending')
      .execute();
    expect(unrecorded.length).toBeGreaterThan(0);
    for (const m of unrecorded)
      expect(m).toMatchObject({ planned_channel: 'SMS', fallback_used: true, fallback_reason: 'RCS_NOT_SUPPORTED' });
  }, 120_000);
});
