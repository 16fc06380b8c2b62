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

/**
 * Smart encoding (a sender's SMS `smartEncoding`): the typographic characters word processors and phones put in
 * text (curly quotes, long dashes, ellipsis, non-breaking and thin spaces, guillemets, bullets) become their GSM-7
 * look-alikes, so one such character does not turn the whole message into UCS-2 (70 characters a segment instead
 * of 160). Characters with no look-alike are kept (the text then stays UCS-2). Applied before counting, and the
 * mapped text is what the carrier receives: preview, estimate, acceptance and the bill count the same body.
 */
const SMART: Readonly<Record<string, string>> = {
  '\u2018': "'", // ‘
  '\u2019': "'", // ’
  '\u201A': "'", // ‚
  '\u201B': "'", // ‛
  '\u2032': "'", // ′
  '\u201C': '"', // “
  '\u201D': '"', // ”
  '\u201E': '"', // „
  '\u201F': '"', // ‟
  '\u2033': '"', // ″
  '\u00AB': '"', // «
  '\u00BB': '"', // »
  '\u2039': '<', // ‹
  '\u203A': '>', // ›
  '\u2010': '-', // ‐
  '\u2011': '-', // ‑
  '\u2012': '-', // ‒
  '\u2013': '-', // –
  '\u2014': '-', // —
  '\u2015': '-', // ―
  '\u2212': '-', // −
  '\u2026': '...', // …
  '\u00A0': ' ', // no-break space
  '\u2002': ' ',
  '\u2003': ' ',
  '\u2009': ' ', // thin space
  '\u202F': ' ', // narrow no-break space
  '\u200B': '', // zero-width space
  '\u2022': '*', // •
  '\u02C6': '^', // ˆ
  '\u02DC': '~', // ˜
};
const SMART_PATTERN = new RegExp(`[${Object.keys(SMART).join('')}]`, 'gu');

export function smartEncode(text: string): string {
  return text.replace(SMART_PATTERN, (ch) => SMART[ch] ?? ch);
}
