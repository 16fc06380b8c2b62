// Segment counting and pricing, table-driven (pure functions; no database).
import { describe, expect, it } from 'vitest';
import { countSegments } from '../src/domain/messaging/sms-segments.ts';
import { fromAmount, textPrice, toMoney, CARD_OR_MEDIA_PRICE } from '../src/domain/messaging/pricing.ts';

describe('countSegments', () => {
  const cases: Array<[string, string, { encoding: string; characters: number; segments: number }]> = [
    ['empty', '', { encoding: 'GSM7', characters: 0, segments: 1 }],
    ['plain ASCII', 'Hello!', { encoding: 'GSM7', characters: 6, segments: 1 }],
    ['160 GSM-7 fits one', 'a'.repeat(160), { encoding: 'GSM7', characters: 160, segments: 1 }],
    ['161 GSM-7 needs two', 'a'.repeat(161), { encoding: 'GSM7', characters: 161, segments: 2 }],
    ['306 = 2 × 153', 'a'.repeat(306), { encoding: 'GSM7', characters: 306, segments: 2 }],
    ['307 needs three', 'a'.repeat(307), { encoding: 'GSM7', characters: 307, segments: 3 }],
    ['extension chars count 2', '{}[]~^|\\€', { encoding: 'GSM7', characters: 18, segments: 1 }],
    ['80 euro signs = 160 septets', '€'.repeat(80), { encoding: 'GSM7', characters: 160, segments: 1 }],
    ['81 euro signs = 162 septets', '€'.repeat(81), { encoding: 'GSM7', characters: 162, segments: 2 }],
    // 152 plain + an extension char would straddle the first part's end: it moves to part 2.
    ['escape pair never split', `${'a'.repeat(152)}€${'a'.repeat(152)}`, { encoding: 'GSM7', characters: 306, segments: 3 }],
    ['GSM-7 accented letters stay GSM-7', 'Café à Zürich', { encoding: 'GSM7', characters: 13, segments: 1 }],
    ['one non-GSM char switches to UCS-2', 'Price: 5 ₹', { encoding: 'UCS2', characters: 10, segments: 1 }],
    ['70 UCS-2 fits one', 'ж'.repeat(70), { encoding: 'UCS2', characters: 70, segments: 1 }],
    ['71 UCS-2 needs two', 'ж'.repeat(71), { encoding: 'UCS2', characters: 71, segments: 2 }],
    ['134 = 2 × 67', 'ж'.repeat(134), { encoding: 'UCS2', characters: 134, segments: 2 }],
    ['emoji count 2', '😀😀', { encoding: 'UCS2', characters: 4, segments: 1 }],
    ['35 emoji = 70 units', '😀'.repeat(35), { encoding: 'UCS2', characters: 70, segments: 1 }],
    ['surrogate pair never split', `${'ж'.repeat(66)}😀${'ж'.repeat(66)}`, { encoding: 'UCS2', characters: 134, segments: 3 }],
  ];
  for (const [name, text, expected] of cases) {
    it(name, () => expect(countSegments(text)).toEqual(expected));
  }
});

describe('pricing', () => {
  it('adds segment prices exactly, where binary floats drift', () => {
    let units = 0;
    let float = 0;
    for (let i = 0; i < 1000; i++) {
      units += textPrice(1);
      float += 0.0039;
    }
    expect(toMoney(units)).toEqual({ amount: '3.9000', currency: 'USD' });
    expect(float).not.toBe(3.9); // the drift the integer units avoid
  });

  it('formats and parses four-decimal USD amounts', () => {
    expect(toMoney(textPrice(3))).toEqual({ amount: '0.0117', currency: 'USD' });
    expect(toMoney(CARD_OR_MEDIA_PRICE)).toEqual({ amount: '0.0150', currency: 'USD' });
    expect(toMoney(0)).toEqual({ amount: '0.0000', currency: 'USD' });
    expect(fromAmount('0.0039')).toBe(39);
    expect(fromAmount('12.5')).toBe(125_000);
    expect(() => fromAmount('0.00391')).toThrow();
  });
});
