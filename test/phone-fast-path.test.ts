// parsePhone's fast path for NANP numbers (src/domain/phone.ts) must answer exactly what libphonenumber-js does:
// both are compared on generated numbers in every shape the fast path reads, and in shapes it must leave alone.
import fc from 'fast-check';
import { parsePhoneNumberWithError, type CountryCode } from 'libphonenumber-js/max';
import { describe, expect, it } from 'vitest';
import { parsePhone } from '../src/domain/phone.ts';

/** The reference: libphonenumber-js alone, as parsePhone was before the fast path. */
function reference(input: string, defaultCountry?: string) {
  try {
    const parsed = parsePhoneNumberWithError(input.trim(), defaultCountry as CountryCode | undefined);
    if (!parsed.isValid()) return undefined;
    return { e164: parsed.number, country: parsed.country ?? null };
  } catch {
    return undefined;
  }
}

const digits = (n: number) => fc.array(fc.integer({ min: 0, max: 9 }), { minLength: n, maxLength: n }).map((d) => d.join(''));
// Area codes: any three digits, and ones of other NANP countries, toll-free and special codes on purpose.
const area = fc.oneof(
  digits(3),
  fc.constantFrom('416', '604', '787', '876', '242', '800', '888', '900', '555', '211', '305', '505', '274', '472', '983', '310'),
);
const exchange = fc.oneof(digits(3), fc.constantFrom('555', '200', '911', '020', '520', '564'));
const line = digits(4);
const shape = fc.constantFrom(
  (a: string, e: string, l: string) => `+1${a}${e}${l}`,
  (a: string, e: string, l: string) => `${a}${e}${l}`,
  (a: string, e: string, l: string) => `(${a}) ${e}-${l}`,
  (a: string, e: string, l: string) => `(${a})${e}-${l}`,
  (a: string, e: string, l: string) => `${a}-${e}-${l}`,
  (a: string, e: string, l: string) => `${a}.${e}.${l}`,
  (a: string, e: string, l: string) => `${a} ${e} ${l}`,
  (a: string, e: string, l: string) => ` +1${a}${e}${l}\t`,
  (a: string, e: string, l: string) => `1${a}${e}${l}`,
  (a: string, e: string, l: string) => `+1 ${a} ${e} ${l}`,
  (a: string, e: string, l: string) => `${a}-${e} ${l}`,
  (a: string, e: string, l: string) => `+1${a}${e}${l}0`,
  (a: string, e: string, l: string) => `${a}${e}${l} x12`,
);
const country = fc.constantFrom(undefined, 'US', 'CA', 'GB', 'DE', 'AG');

describe('parsePhone fast path', () => {
  it('answers exactly what libphonenumber-js answers for NANP-shaped input', () => {
    fc.assert(
      fc.property(area, exchange, line, shape, country, (a, e, l, format, c) => {
        const input = format(a, e, l);
        expect(parsePhone(input, c)).toEqual(reference(input, c));
      }),
      { numRuns: 50_000 },
    );
  });

  it('answers exactly what libphonenumber-js answers for other strings', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.stringMatching(/^\+?[0-9() .-]{0,16}$/)), country, (input, c) => {
        expect(parsePhone(input, c)).toEqual(reference(input, c));
      }),
      { numRuns: 20_000 },
    );
  });

  it('keeps the known answers', () => {
    expect(parsePhone('+14155550123')).toEqual(reference('+14155550123'));
    expect(parsePhone('(212) 555-0100', 'US')).toEqual({ e164: '+12125550100', country: 'US' });
    expect(parsePhone('+12125550100')).toEqual({ e164: '+12125550100', country: 'US' });
    expect(parsePhone('+14165550123')).toEqual({ e164: '+14165550123', country: 'CA' });
    expect(parsePhone('416-555-0123', 'US')).toEqual({ e164: '+14165550123', country: 'CA' });
    expect(parsePhone('555-0123', 'US')).toBeUndefined();
  });
});
