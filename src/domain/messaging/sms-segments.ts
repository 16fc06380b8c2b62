// SMS segment counting. GSM-7: 160 septets in one segment, 153 per part of a multipart message; the
// extension characters take an escape plus the character (2 septets). UCS-2: 70 code units single, 67 per
// part; characters outside the BMP (most emoji) are surrogate pairs (2 units). Parts are packed greedily and
// an escape pair or surrogate pair is never split across parts, as carriers do, so a long message can need
// one part more than length / 153.

export type Encoding = 'GSM7' | 'UCS2';

export type SegmentCount = {
  encoding: Encoding;
  /** Length as the encoding counts it: GSM-7 septets or UCS-2 code units. */
  characters: number;
  /** At least 1 (an empty body is still one message). */
  segments: number;
};

const GSM7_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\u001bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM7_EXTENSION = '\f^{}\\[~]|€';

const basic = new Set([...GSM7_BASIC]);
const extension = new Set([...GSM7_EXTENSION]);

/** Cost of each character in the chosen encoding, or undefined for GSM-7 when a character is not in it. */
function gsm7Costs(text: string): number[] | undefined {
  const costs: number[] = [];
  for (const ch of text) {
    if (basic.has(ch)) costs.push(1);
    else if (extension.has(ch)) costs.push(2);
    else return undefined;
  }
  return costs;
}

function ucs2Costs(text: string): number[] {
  return [...text].map((ch) => ch.length); // code points → UTF-16 units (2 for a surrogate pair)
}

function pack(costs: number[], single: number, part: number): { characters: number; segments: number } {
  const characters = costs.reduce((a, b) => a + b, 0);
  if (characters <= single) return { characters, segments: 1 };
  let segments = 1;
  let used = 0;
  for (const cost of costs) {
    if (used + cost > part) {
      segments++;
      used = 0;
    }
    used += cost;
  }
  return { characters, segments };
}

export function countSegments(text: string): SegmentCount {
  const gsm = gsm7Costs(text);
  if (gsm) return { encoding: 'GSM7', ...pack(gsm, 160, 153) };
  return { encoding: 'UCS2', ...pack(ucs2Costs(text), 70, 67) };
}
