// Carrier-sandbox fixtures. Senders for tests that need a sender type the Sender IDs section would take several
// steps to make ready: stored directly on a carrier-sandbox number (+1500…), ACTIVE at once (an RCS agent
// LAUNCHED), then given its protocols through the API, so the protocols are validated and stored exactly as a
// client's would be. And the sandbox's receipts, moved on by hand in tests that run without workers.
import { randomInt } from 'node:crypto';
import { expect } from 'vitest';
import type { SenderIdType } from '../../src/db/tables/enums.ts';
import { QUEUES } from '../../src/jobs/queue-names.ts';
import { deliverSimulatorCallbacks, type CallbackJob } from '../../src/providers/simulator.ts';
import { call, type TestServer } from './server.ts';

type Org = Awaited<ReturnType<TestServer['newOrg']>>;

/** A sender stored directly on a carrier-sandbox number, with these protocols enabled (ACTIVE at once). */
export async function sandboxNumberSender(
  srv: TestServer,
  org: Org,
  type: SenderIdType,
  protocols: Array<{ type: string; config?: Record<string, unknown> }>,
): Promise<{ id: string; phone: string }> {
  const phone = `+1500${randomInt(0, 10_000_000).toString().padStart(7, '0')}`;
  const row = await srv.context.db
    .insertInto('sender_ids')
    .values({
      organization_id: org.organizationId,
      name: `${type} sender`,
      type,
      status: 'ACTIVE',
      provider: 'PROVIDER_A',
      phone_number: phone,
      is_sandbox: false,
      rcs_agent_phase: type === 'RCS_AGENT' ? 'LAUNCHED' : null,
      updated_at: new Date(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  for (const p of protocols) {
    const res = await call(srv, 'POST', `/v1/sender-ids/${row.id}/protocols`, { key: org.apiKey.secret, body: p });
    expect(res.status, res.text).toBe(200);
  }
  return { id: row.id, phone };
}

/**
 * The carrier sandbox's due callbacks (receipts), posted to the service's signed callback route as its worker
 * would: for tests that run without workers and move receipts on by hand.
 */
export async function deliverReceipts(srv: TestServer): Promise<void> {
  const queue = srv.context.queue!;
  const jobs = await queue.fetch<CallbackJob>(QUEUES.simulatorCallback, { batchSize: 100 });
  if (jobs.length === 0) return;
  await deliverSimulatorCallbacks(
    srv.context.db,
    srv.baseUrl,
    jobs.map((j) => j.data),
  );
  await queue.complete(
    QUEUES.simulatorCallback,
    jobs.map((j) => j.id),
  );
}
