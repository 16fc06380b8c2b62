// Time-ordered (version 7) uuids drawn in bulk in this process, for writers that give a COPY its ids beforehand
// (a column default that PostgreSQL must call per row makes COPY insert the rows one by one). The layout is the one
// time_ordered_uuid() gives every other new row (migration 0029: RFC 9562 version 7, 48-bit Unix milliseconds
// first), so these rows land at the right edge of the same indexes. Drawn here rather than by
// `select time_ordered_uuid() from generate_series(…)` because PostgreSQL draws each one from OpenSSL separately:
// 250,000 ids (a 150,000-row import's contacts and consent entries) took that backend 1.3-1.4 s; here ~0.1 s, from
// one crypto.randomFillSync.
import { randomFillSync, randomInt } from 'node:crypto';

/** 30 bits after the timestamp count up within a millisecond (RFC 9562 §6.2, method 1), the other 44 are random. */
const COUNTER_LIMIT = 2 ** 30;

let lastMs = 0;
let counter = 0;

/**
 * `count` new version-7 uuids, strictly increasing in the order given (and after every id this process drew
 * before), so rows written in that order keep it among ties of their other sort keys.
 */
export function timeOrderedIds(count: number): string[] {
  // Every id's 16 bytes in one buffer (random, then the time and counter written over their bits) and their text in
  // another, read as one string and cut into ids: a few objects per id, where a string built per id made ten.
  const bytes = randomFillSync(Buffer.allocUnsafe(count * 16));
  const text = Buffer.allocUnsafe(count * 36);
  const now = Date.now();
  for (let i = 0, at = 0, out = 0; i < count; i++) {
    if (now > lastMs) {
      lastMs = now;
      counter = randomInt(COUNTER_LIMIT / 2); // a random start with room to count up
    } else if (++counter === COUNTER_LIMIT) {
      lastMs++; // the millisecond's counter is spent: borrow the next one (never happens below ~500 million ids)
      counter = randomInt(COUNTER_LIMIT / 2);
    }
    bytes.writeUIntBE(lastMs, at, 6);
    bytes[at + 6] = 0x70 | (counter >>> 26); // version 7, counter bits 29-26
    bytes[at + 7] = (counter >>> 18) & 0xff;
    bytes[at + 8] = 0x80 | ((counter >>> 12) & 0x3f); // variant 10, counter bits 17-12
    bytes[at + 9] = (counter >>> 4) & 0xff;
    bytes[at + 10] = ((counter & 0x0f) << 4) | (bytes[at + 10]! & 0x0f); // counter bits 3-0, then 44 random bits
    for (let b = 0; b < 16; b++, at++) {
      if (b === 4 || b === 6 || b === 8 || b === 10) text[out++] = DASH;
      text[out++] = HEX[bytes[at]! >>> 4]!;
      text[out++] = HEX[bytes[at]! & 0x0f]!;
    }
  }
  const all = text.toString('latin1');
  const ids = new Array<string>(count);
  for (let i = 0; i < count; i++) ids[i] = all.slice(i * 36, i * 36 + 36);
  return ids;
}

const HEX = Buffer.from('0123456789abcdef', 'latin1');
const DASH = 0x2d;
