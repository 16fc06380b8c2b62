// Prices as integers of 1/10,000 USD, so sums never meet binary-float rounding: a text segment is 39
// (0.0039 USD), a card or media message 150 (0.0150 USD). Amounts leave the service as decimal strings.

const PRICE_UNITS_PER_USD = 10_000;
export const TEXT_SEGMENT_PRICE = 39;
export const CARD_OR_MEDIA_PRICE = 150;

export type Money = { amount: string; currency: 'USD' };

/** Price of a message billed per text segment. */
export function textPrice(segments: number): number {
  return segments * TEXT_SEGMENT_PRICE;
}

/** 1234 → { amount: "0.1234", currency: "USD" }. */
export function toMoney(units: number): Money {
  if (!Number.isSafeInteger(units)) throw new RangeError(`price units must be a safe integer, got ${units}`);
  const sign = units < 0 ? '-' : '';
  const abs = Math.abs(units);
  const whole = Math.floor(abs / PRICE_UNITS_PER_USD);
  const fraction = String(abs % PRICE_UNITS_PER_USD).padStart(4, '0');
  return { amount: `${sign}${whole}.${fraction}`, currency: 'USD' };
}

/** "0.0039" → 39; rejects more than four decimals rather than rounding. */
export function fromAmount(amount: string): number {
  const m = /^(-?)(\d+)(?:\.(\d{1,4}))?$/.exec(amount);
  if (!m) throw new RangeError(`not a USD amount with at most 4 decimals: ${amount}`);
  const units = Number(m[2]) * PRICE_UNITS_PER_USD + Number((m[3] ?? '').padEnd(4, '0'));
  return m[1] ? -units : units;
}

/**
 * Carriers' per-message pass-through fees, billed at cost on each SMS/MMS message a carrier took, by the class of
 * the sender it went from (the document's `AnalyticsUsageLine` `pass_through_fee`; the US carriers' published
 * surcharges, rounded up to one figure per class): a 10DLC number (LONG_CODE) 0.0030 USD per SMS and 0.0050 USD
 * per MMS; a toll-free number 0.0025 and 0.0050. Short codes, alphanumeric senders, RCS, chat-app and the sandbox
 * sender (the carrier simulator) carry none.
 */
const PASS_THROUGH_FEES: Readonly<Record<string, { SMS: number; MMS: number }>> = {
  LONG_CODE: { SMS: 30, MMS: 50 },
  TOLL_FREE: { SMS: 25, MMS: 50 },
};

/** The pass-through fee (1/10,000 USD) of one message carried on `channel` from a sender of this class. */
export function passThroughFee(sender: { type: string; isSandbox: boolean }, channel: string): number {
  if (sender.isSandbox || (channel !== 'SMS' && channel !== 'MMS')) return 0;
  return PASS_THROUGH_FEES[sender.type]?.[channel] ?? 0;
}
