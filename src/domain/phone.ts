// Phone numbers: parsed and normalized to E.164 with libphonenumber-js (full metadata, so validity is
// checked against real numbering plans, not only lengths).
import { parsePhoneNumberWithError, type CountryCode } from 'libphonenumber-js/max';

export type ParsedPhone = { e164: string; country: string | null };

/** E.164 and region of `input`, or undefined when it is not a valid number. National formats need `defaultCountry`. */
export function parsePhone(input: string, defaultCountry?: string): ParsedPhone | undefined {
  try {
    const parsed = parsePhoneNumberWithError(input.trim(), defaultCountry as CountryCode | undefined);
    if (!parsed.isValid()) return undefined;
    return { e164: parsed.number, country: parsed.country ?? null };
  } catch {
    return undefined;
  }
}
