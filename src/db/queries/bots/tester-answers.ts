// SQL for a handset's answer to an RCS tester invite (a provider's `tester` callback): the agent's test device and
// the testers of the bots on that agent move from waiting to the answer. Only waiting rows move: a repeated
// callback changes nothing, and a later invite's own answer is not overwritten by an old one.
import { tenant, type TenantDb } from '../../tenant.ts';

export async function applyTesterAnswer(
  db: TenantDb,
  orgId: string,
  a: { senderId: string; phone: string; status: 'ACCEPTED' | 'DECLINED'; at: Date },
): Promise<void> {
  await tenant(db.updateTable('rcs_test_devices'), orgId)
    .set({ status: a.status, accepted_at: a.status === 'ACCEPTED' ? a.at : null })
    .where('sender_id', '=', a.senderId)
    .where('phone', '=', a.phone)
    .where('status', '=', 'INVITED')
    .execute();
  await tenant(db.updateTable('bot_testers'), orgId)
    .set({ rcs_invite_status: a.status })
    .where('phone', '=', a.phone)
    .where('rcs_invite_status', '=', 'PENDING')
    .where('bot_id', 'in', tenant(db.selectFrom('bots'), orgId).select('id').where('sender_id', '=', a.senderId))
    .execute();
}
