// Inbound-call forwarding of a number sender (openapi/paths/v1/sender-ids/[id]/voice-forwarding.yaml). The change is
// synced to the voice provider (MessagingProvider.syncVoiceForwarding) inside the transaction that holds the
// sender's lock and before anything is stored: when the provider refuses or does not confirm, the answer is
// 502 UPSTREAM_ERROR and the stored setting is the previous one. Concurrent changes of one sender are serialized
// by that lock, so the provider's last setting is the stored one.
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { inTransaction } from '../../db/database.ts';
import { liveNumberOfSender } from '../../db/queries/sender-ids/numbers.ts';
import { getSender, type SenderRow } from '../../db/queries/sender-ids/senders.ts';
import * as q from '../../db/queries/sender-ids/voice-forwarding.ts';
import { ProviderError, ProviderRejection, type VoiceForwardingChange } from '../../providers/provider.ts';
import { ApiError, bodyField, conflict, found, invalidField, unprocessable } from '../errors.ts';
import { providerOperation } from '../providers.ts';
import type { Services, Tenant } from '../tenant.ts';
import type { TenantDb } from '../../db/tenant.ts';

export type VoiceForwardingRow = q.VoiceForwardingRow;

/** Sender types whose number can take calls. */
const VOICE_SENDER_TYPES = new Set(['LONG_CODE', 'TOLL_FREE']);
/** Countries a destination may be in. */
const DESTINATION_COUNTRIES = new Set(['US', 'CA']);

/** The setting, or null when forwarding was never configured. 404 for a sender not of the organization. */
export async function getForwarding(tenant: Tenant, senderId: string): Promise<VoiceForwardingRow | null> {
  found(await getSender(tenant.db, tenant.organizationId, senderId), 'Sender ID');
  return (await q.getVoiceForwarding(tenant.db, tenant.organizationId, senderId)) ?? null;
}

/** Enables forwarding to `destination` (or changes it), synced to the provider first. Idempotent. */
export function configureForwarding(
  tenant: Tenant,
  services: Services,
  senderId: string,
  body: { destination: string },
): Promise<VoiceForwardingRow> {
  return inTransaction(tenant.db, async (db) => {
    const sender = await lockedSender(db, tenant.organizationId, senderId);
    if (sender.status === 'DEACTIVATED') throw conflict('INVALID_STATE', 'The sender ID is DEACTIVATED.');
    if (!VOICE_SENDER_TYPES.has(sender.type) || !sender.phone_number) {
      throw unprocessable(
        'UNPROCESSABLE',
        `Only LONG_CODE and TOLL_FREE senders with a voice-capable number can forward calls (this one is ${sender.type}).`,
      );
    }
    // The sandbox sender's +1500 number is the carrier simulator's, no carrier's: no call ever reaches it.
    if (sender.is_sandbox)
      throw unprocessable(
        'UNPROCESSABLE',
        "The sandbox sender's number is simulated and takes no calls; forward a purchased or imported number.",
      );
    // The number's capabilities come with its lease.
    const lease = await liveNumberOfSender(db, tenant.organizationId, senderId);
    if (lease && !lease.capabilities.includes('VOICE'))
      throw unprocessable('UNPROCESSABLE', `The sender's number ${lease.number} has no VOICE capability.`);
    const destination = validDestination(body.destination, sender.phone_number);
    const { confirmedAt } = await sync(services, sender, {
      organizationId: tenant.organizationId,
      senderId,
      number: sender.phone_number,
      destination,
      enabled: true,
    });
    return q.enableVoiceForwarding(db, tenant.organizationId, senderId, destination, confirmedAt);
  });
}

/** Disables forwarding (destination kept), synced to the provider first; null when never configured. Idempotent. */
export function disableForwarding(tenant: Tenant, services: Services, senderId: string): Promise<VoiceForwardingRow | null> {
  return inTransaction(tenant.db, async (db) => {
    const sender = await lockedSender(db, tenant.organizationId, senderId);
    const current = await q.getVoiceForwarding(db, tenant.organizationId, senderId, { forUpdate: true });
    if (!current) return null;
    if (!current.enabled) return current;
    const { confirmedAt } = await sync(services, sender, {
      organizationId: tenant.organizationId,
      senderId,
      number: sender.phone_number,
      destination: current.destination,
      enabled: false,
    });
    return found(await q.disableVoiceForwarding(db, tenant.organizationId, senderId, confirmedAt), 'Voice forwarding');
  });
}

/**
 * A US or Canadian line: `+1`, valid in a US or CA area code (libphonenumber-js, full metadata), not toll-free,
 * premium-rate or shared-cost, and not the sender's own number. Otherwise 400 on `body.destination`.
 */
function validDestination(input: string, ownNumber: string | null): string {
  const field = bodyField('destination');
  const parsed = parsePhoneNumberFromString(input);
  if (!parsed || parsed.countryCallingCode !== '1' || !parsed.isValid())
    throw invalidField(field, 'must be a valid US or Canadian phone number in E.164 form');
  if (!parsed.country || !DESTINATION_COUNTRIES.has(parsed.country))
    throw invalidField(field, `must be a US or Canadian number (this one is ${parsed.country ?? 'another NANP country'})`);
  const type = parsed.getType();
  if (type === 'TOLL_FREE' || type === 'PREMIUM_RATE' || type === 'SHARED_COST')
    throw invalidField(field, `must not be a ${type.toLowerCase().replace('_', '-')} number`);
  if (ownNumber !== null && parsed.number === ownNumber) throw invalidField(field, "must not be the sender's own number");
  return parsed.number;
}

async function lockedSender(db: TenantDb, organizationId: string, senderId: string): Promise<SenderRow> {
  return found(await getSender(db, organizationId, senderId, { forUpdate: true }), 'Sender ID');
}

/**
 * The sender's provider call; its refusal or silence is 502 UPSTREAM_ERROR (the transaction then stores nothing),
 * and a provider without voice forwarding is 422 PROVIDER_UNSUPPORTED.
 */
async function sync(services: Services, sender: SenderRow, change: VoiceForwardingChange): Promise<{ confirmedAt: Date }> {
  const apply = providerOperation(services.providers.forSender(sender), 'syncVoiceForwarding', 'voice forwarding', 'path.id');
  try {
    return await apply(change);
  } catch (error) {
    if (error instanceof ProviderRejection)
      throw new ApiError(502, 'UPSTREAM_ERROR', `The voice provider refused the change (${error.code}); nothing changed.`);
    if (error instanceof ProviderError)
      throw new ApiError(502, 'UPSTREAM_ERROR', 'The voice provider did not confirm the change; nothing changed.');
    throw error;
  }
}
