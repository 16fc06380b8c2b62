// The built-in carrier simulator: a deterministic sandbox like Twilio's magic numbers, so integrators and
// tests can choose outcomes by phone number. Rules (documented in the README, "Carrier sandbox"):
//   RCS capability by the number's last digit: 0–4 → RCS capable, 5–9 → not (SMS/MMS only).
//   A number ending in 9999 → the capability check fails (provider error, not billable).
import { ProviderError, type MessagingProvider, type ProviderName } from './provider.ts';

export function simulatedRcsCapable(phone: string): boolean {
  const last = Number(phone.at(-1));
  return last >= 0 && last <= 4;
}

export class CarrierSimulator implements MessagingProvider {
  readonly name: ProviderName;

  constructor(name: ProviderName = 'PROVIDER_A') {
    this.name = name;
  }

  async checkRcsCapability(phone: string): Promise<{ rcsCapable: boolean }> {
    if (phone.endsWith('9999')) throw new ProviderError('simulated capability lookup failure');
    return { rcsCapable: simulatedRcsCapable(phone) };
  }
}
