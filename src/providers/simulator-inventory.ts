// The carrier simulator's number inventory: deterministic, the same on every process and every run, per provider
// (rules in the README, "Carrier sandbox"). Numbers are fictional (NXX 555).
//   Local:     +1 <area code> 555 <line>, by state/province and area code (AREA_CODES)
//   Toll-Free: +1 <8XX> 555 <line>, for every toll-free prefix
//   lines:     PROVIDER_A 0100–0119, PROVIDER_B 0200–0219
//   …09        not purchasable by the organization (no selection proof)
//   …13        SMS and VOICE only (no MMS)
//   …17        the order times out: the outcome is unknown (the purchase needs reconciliation)
//   …18        the provider refuses the order (502, nothing reserved)
// Imported numbers (bring your own): the provider confirms any NANP number outside this inventory, except
//   …0422 (not in your provider account: 422) and …0502 (the provider cannot be reached: 502).
import { AREA_CODES, TOLL_FREE_PREFIXES } from '../lib/nanp.ts';
import type { InventoryNumber, InventoryType, NumberSearchQuery, ProviderName } from './provider.ts';

const LINES_PER_BLOCK = 20;
const FIRST_LINE: Record<ProviderName, number> = { PROVIDER_A: 100, PROVIDER_B: 200 };
const MONTHLY: Record<ProviderName, Record<InventoryType, string>> = {
  PROVIDER_A: { Local: '1.15', 'Toll-Free': '2.00' },
  PROVIDER_B: { Local: '1.00', 'Toll-Free': '2.15' },
};

function row(
  provider: ProviderName,
  inventoryType: InventoryType,
  prefix: string,
  line: number,
  place: { countryCode: 'US' | 'CA'; region: string | null; locality: string | null },
): InventoryNumber {
  const lineDigits = String(line).padStart(4, '0');
  const national = `${prefix}555${lineDigits}`;
  const tail = lineDigits.slice(-2);
  return {
    numberKey: `nk_${provider === 'PROVIDER_A' ? 'pa' : 'pb'}_${inventoryType === 'Local' ? 'l' : 'tf'}${national}`,
    number: `+1${national}`,
    inventoryType,
    provider,
    ...place,
    capabilities: tail === '13' ? ['SMS', 'VOICE'] : ['SMS', 'MMS', 'VOICE'],
    monthlyCost: MONTHLY[provider][inventoryType],
    purchasable: tail !== '09',
  };
}

/** Every row of one provider's inventory of one type (before removing assigned numbers), in a fixed order. */
function inventoryOf(provider: ProviderName, inventoryType: InventoryType): InventoryNumber[] {
  const lines = Array.from({ length: LINES_PER_BLOCK }, (_, i) => FIRST_LINE[provider] + i);
  if (inventoryType === 'Local') {
    return AREA_CODES.flatMap((a) => lines.map((l) => row(provider, 'Local', a.areaCode, l, a)));
  }
  return TOLL_FREE_PREFIXES.flatMap((p) =>
    lines.map((l) => row(provider, 'Toll-Free', p, l, { countryCode: 'US', region: null, locality: null })),
  );
}

/** Rows matching a search (assigned numbers are removed by the simulator). Toll-Free is US inventory. */
export function matchInventory(query: NumberSearchQuery): InventoryNumber[] {
  return inventoryOf(query.provider, query.inventoryType).filter(
    (r) =>
      r.countryCode === query.countryCode &&
      (!query.leadingNumber || r.number.slice(2).startsWith(query.leadingNumber)) &&
      (query.inventoryType !== 'Local' || !query.region || r.region === query.region) &&
      (query.capabilities ?? []).every((c) => r.capabilities.includes(c)),
  );
}

/** The inventory row behind a numberKey, or undefined. */
export function inventoryRow(numberKey: string): InventoryNumber | undefined {
  const m = /^nk_(pa|pb)_(l|tf)(\d{10})$/.exec(numberKey);
  if (!m) return undefined;
  const provider: ProviderName = m[1] === 'pa' ? 'PROVIDER_A' : 'PROVIDER_B';
  return inventoryOf(provider, m[2] === 'l' ? 'Local' : 'Toll-Free').find((r) => r.numberKey === numberKey);
}

/** The outcome an order for this row gets, by its line's magic digits. */
export function orderOutcomeOf(number: string): 'ok' | 'timeout' | 'refused' {
  const tail = number.slice(-2);
  return tail === '17' ? 'timeout' : tail === '18' ? 'refused' : 'ok';
}

export const isInventoryNumber = (number: string) =>
  /^\+1\d{3}555(01|02)\d{2}$/.test(number) && Number(number.slice(-4)) % 100 < LINES_PER_BLOCK;
