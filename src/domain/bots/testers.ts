// RCS tester invites answered on the handset (issue 33 item 8). The invite goes out through the provider
// (inviteRcsTester: addTester, addRcsTestDevice); the tester accepts or declines on the device, and the provider
// reports it through its callback route as a `tester` callback (the carrier simulator by its sandbox rules, README
// "Carrier sandbox"). The answer moves the agent's test device and the bot testers of that agent.
import type { AppContext } from '../../app-context.ts';
import { inTransaction } from '../../db/database.ts';
import { sendersByIds } from '../../db/queries/sender-ids/senders.ts';
import { applyTesterAnswer } from '../../db/queries/bots/tester-answers.ts';
import type { ProviderCallback } from '../../providers/provider.ts';
import { tenantFor } from '../tenant.ts';

export type TesterAnswer = Extract<ProviderCallback, { type: 'tester' }>;

/** Applies the answers, each in the organization of the sender it names; an unknown sender's answer is dropped. */
export async function applyTesterAnswers(app: AppContext, answers: TesterAnswer[]): Promise<void> {
  if (answers.length === 0) return;
  // System read: the callback names a sender, not an organization (as an inbound message names a number).
  const senders = new Map((await sendersByIds(app.db, [...new Set(answers.map((a) => a.senderId))])).map((s) => [s.id, s]));
  // Each answer is applied on its organization's tenant handle, so the tenant guard checks it like any request.
  const byOrganization = new Map<string, TesterAnswer[]>();
  for (const a of answers) {
    const sender = senders.get(a.senderId);
    if (!sender) continue;
    byOrganization.set(sender.organization_id, [...(byOrganization.get(sender.organization_id) ?? []), a]);
  }
  for (const [organizationId, own] of byOrganization) {
    const { db } = await tenantFor(app, organizationId);
    await inTransaction(db, async (tx) => {
      for (const a of own) {
        await applyTesterAnswer(tx, organizationId, { senderId: a.senderId, phone: a.phone, status: a.status, at: new Date(a.at) });
      }
    });
  }
}
