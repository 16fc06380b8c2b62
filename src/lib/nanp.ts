// North American Numbering Plan facts the Sender IDs section needs whatever the provider: toll-free prefixes, and
// where a number is (a Local number's area code, for the area codes the service knows; toll-free numbers are US).
export const TOLL_FREE_PREFIXES = ['800', '833', '844', '855', '866', '877', '888'] as const;

export const AREA_CODES: ReadonlyArray<{ areaCode: string; countryCode: 'US' | 'CA'; region: string; locality: string }> = [
  { areaCode: '212', countryCode: 'US', region: 'NY', locality: 'New York' },
  { areaCode: '718', countryCode: 'US', region: 'NY', locality: 'Brooklyn' },
  { areaCode: '213', countryCode: 'US', region: 'CA', locality: 'Los Angeles' },
  { areaCode: '415', countryCode: 'US', region: 'CA', locality: 'San Francisco' },
  { areaCode: '510', countryCode: 'US', region: 'CA', locality: 'Oakland' },
  { areaCode: '206', countryCode: 'US', region: 'WA', locality: 'Seattle' },
  { areaCode: '312', countryCode: 'US', region: 'IL', locality: 'Chicago' },
  { areaCode: '512', countryCode: 'US', region: 'TX', locality: 'Austin' },
  { areaCode: '214', countryCode: 'US', region: 'TX', locality: 'Dallas' },
  { areaCode: '305', countryCode: 'US', region: 'FL', locality: 'Miami' },
  { areaCode: '617', countryCode: 'US', region: 'MA', locality: 'Boston' },
  { areaCode: '416', countryCode: 'CA', region: 'ON', locality: 'Toronto' },
  { areaCode: '613', countryCode: 'CA', region: 'ON', locality: 'Ottawa' },
  { areaCode: '514', countryCode: 'CA', region: 'QC', locality: 'Montreal' },
  { areaCode: '604', countryCode: 'CA', region: 'BC', locality: 'Vancouver' },
];

const isTollFree = (number: string): boolean => (TOLL_FREE_PREFIXES as readonly string[]).includes(number.slice(2, 5));

/** Where a NANP number is (Local area codes of the table; toll-free prefixes), for imported numbers. */
export function describeNumber(number: string): {
  inventoryType: 'Local' | 'Toll-Free';
  countryCode: 'US' | 'CA';
  region: string | null;
  locality: string | null;
} {
  if (isTollFree(number)) return { inventoryType: 'Toll-Free', countryCode: 'US', region: null, locality: null };
  const area = AREA_CODES.find((a) => a.areaCode === number.slice(2, 5));
  return { inventoryType: 'Local', countryCode: area?.countryCode ?? 'US', region: area?.region ?? null, locality: area?.locality ?? null };
}
