// The carrier simulator's fault switch (`npm run admin -- simulator-faults --transient <rate>`, README "Carrier
// sandbox"): while it is on, sends fail transiently and the dispatcher retries them; once it is back to 0 the next
// attempt is accepted, and the handset gets the message once. The switch is global to a database, so this file runs
// on a database of its own in the run's PostgreSQL: other test files sending at the same time never see it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inject } from 'vitest';
import { sql } from 'kysely';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { createDb, migrateToLatest } from '../src/db/database.ts';
import { dispatchTuning } from '../src/domain/messaging/dispatch.ts';
import { setSimulatorFaults } from '../src/providers/simulator-faults.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

const shared = inject('databaseUrl');
const name = `faults_${randomBytes(4).toString('hex')}`;
let srv: TestServer;
let url: URL;
/** The operator's command, run as a separate process against this file's database. */
const admin = (...args: string[]) =>
  promisify(execFile)(process.execPath, ['src/cli/admin.ts', ...args], {
    env: { ...process.env, DATABASE_URL: url.toString(), NODE_ENV: 'test' },
  });

beforeAll(async () => {
  const { db: admin } = createDb(shared, 1);
  await sql`create database ${sql.id(name)}`.execute(admin);
  await admin.destroy();
  url = new URL(shared);
  url.pathname = `/${name}`;
  const { db } = createDb(url.toString(), 1);
  await migrateToLatest(db as never);
  await db.destroy();
  dispatchTuning.backoffBaseSeconds = 0.2;
  srv = await startTestServer({ workers: true, databaseUrl: url.toString() });
}, 60_000);

afterAll(async () => {
  await srv.close();
  const { db: admin } = createDb(shared, 1);
  await sql`drop database if exists ${sql.id(name)} with (force)`.execute(admin);
  await admin.destroy();
});

it('fails sends transiently while the switch is on; the retry after it is off is accepted, once', async () => {
  const org = await srv.newOrg('Faults org');
  const key = org.apiKey.secret;
  const contact = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: '+14155550121', consentType: 'TRANSACTIONAL' } });
  expect(contact.status, contact.text).toBe(201);

  // From another process, as an operator switches it: this server's simulator reads it within a second.
  expect(JSON.parse((await admin('simulator-faults', '--transient', '1')).stdout)).toEqual({ transient: 1 });
  await expect(admin('simulator-faults', '--transient', '1.5')).rejects.toMatchObject({ code: 2 });
  const sent = await call(srv, 'POST', '/v1/messages/send', {
    key,
    body: { contactId: contact.body.id, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Your order has shipped.' } },
  });
  expect(sent.status, sent.text).toBe(200);
  const id: string = sent.body.data.messageId;
  const row = () => srv.context.db.selectFrom('messages').select(['status', 'attempts']).where('id', '=', id).executeTakeFirstOrThrow();
  const wait = async (done: (r: Awaited<ReturnType<typeof row>>) => boolean) => {
    for (let i = 0; i < 300; i++) {
      const r = await row();
      if (done(r)) return r;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`message ${id}: ${JSON.stringify(await row())}`);
  };

  // Two attempts refused by the carrier: still waiting for a retry, not failed, nothing reached the handset. Waits
  // for the second refusal itself (queued again), not its claim: an attempt still in flight when the switch goes
  // off may read the rate after it and succeed.
  const retrying = await wait((r) => r.attempts >= 2 && r.status === 'queued');
  // (queued between attempts, sending while one is made)
  expect(['queued', 'sending']).toContain(retrying.status);
  const api = await call(srv, 'GET', `/v1/messages/${id}`, { key });
  expect(['queued', 'sending']).toContain(api.body.data.status);
  expect(await srv.context.db.selectFrom('simulator_messages').select('send_calls').where('dedupe_key', '=', id).execute()).toEqual([]);

  await setSimulatorFaults(srv.context.db, 0);
  const delivered = await wait((r) => ['delivered', 'read'].includes(r.status));
  expect(delivered.attempts).toBeGreaterThanOrEqual(3);
  expect(await srv.context.db.selectFrom('simulator_messages').select('send_calls').where('dedupe_key', '=', id).execute()).toEqual([
    { send_calls: 1 },
  ]);
}, 30_000);
