// Phone numbers: parsed and normalized to E.164 with libphonenumber-js (full metadata, so validity is
// checked against real numbering plans, not only lengths).
import { Metadata, parsePhoneNumberWithError, type CountryCode } from 'libphonenumber-js/max';

export type ParsedPhone = { e164: string; country: string | null };

/** E.164 and region of `input`, or undefined when it is not a valid number. National formats need `defaultCountry`. */
export function parsePhone(input: string, defaultCountry?: string): ParsedPhone | undefined {
  const trimmed = input.trim();
  const fast = usNumber(trimmed, defaultCountry);
  if (fast) return fast;
  try {
    const parsed = parsePhoneNumberWithError(trimmed, defaultCountry as CountryCode | undefined);
    if (!parsed.isValid()) return undefined;
    return { e164: parsed.number, country: parsed.country ?? null };
  } catch {
    return undefined;
  }
}

// The fast path for the commonest input (a contact import is mostly US numbers): libphonenumber-js builds a
// RegExp from each pattern's text on every check, ~7 µs a number, most of an import's time in Node. For ten
// digits after +1 (or, with defaultCountry US, in the plain national formats below) it gives the number to the
// first country of calling code 1 whose numbering plan has a type for it, US first, and calls it valid exactly
// when it has a type. So when the US plan has one, its answer is {+1…, US}: that is checked here with the same
// patterns from the same metadata, compiled once. Anything else (another NANP country, an invalid number, any
// other shape) goes to libphonenumber-js. test/phone-fast-path.test.ts compares both on generated numbers.
const E164_NANP = /^\+1([2-9]\d{9})$/;
const US_NATIONAL = [/^([2-9]\d{9})$/, /^\(([2-9]\d\d)\) ?(\d{3})-(\d{4})$/, /^([2-9]\d\d)([-. ])(\d{3})\2(\d{4})$/];

/** What libphonenumber-js's getNumberType looks at, not in its published types (metadata.js, Type). */
type PlanType = { pattern(): string; possibleLengths(): number[] | undefined };
type Plan = { nationalNumberPattern(): string; type(name: string): PlanType | undefined };
const TYPES = ['FIXED_LINE', 'MOBILE', 'PREMIUM_RATE', 'TOLL_FREE', 'SHARED_COST', 'VOIP', 'PERSONAL_NUMBER', 'PAGER', 'UAN', 'VOICEMAIL'];

const entirely = (pattern: string) => new RegExp(`^(?:${pattern})$`);
const US_PLAN = (() => {
  const metadata = new Metadata();
  metadata.selectNumberingPlan('US');
  const plan = metadata.numberingPlan as unknown as Plan;
  const types = TYPES.flatMap((name) => {
    const type = plan.type(name);
    return type && type.pattern() ? [{ pattern: entirely(type.pattern()), lengths: type.possibleLengths() }] : [];
  });
  return { national: entirely(plan.nationalNumberPattern()), types };
})();

/** The national number's type in the US plan exists (libphonenumber-js getNumberType !== undefined). */
function usTyped(national: string): boolean {
  if (!US_PLAN.national.test(national)) return false;
  return US_PLAN.types.some((t) => (!t.lengths || t.lengths.includes(national.length)) && t.pattern.test(national));
}

function usNumber(input: string, defaultCountry: string | undefined): ParsedPhone | undefined {
  let national = E164_NANP.exec(input)?.[1];
  if (national === undefined && defaultCountry === 'US') {
    for (const shape of US_NATIONAL) {
      const m = shape.exec(input);
      if (m) {
        national = m
          .slice(1)
          .filter((part) => /^\d+$/.test(part))
          .join('');
        break;
      }
    }
  }
  return national !== undefined && usTyped(national) ? { e164: `+1${national}`, country: 'US' } : undefined;
}
