// Characters as the API document counts them. JSON Schema's `maxLength` (and Ajv, which validates requests and
// responses) counts Unicode code points; a JavaScript string's `length` counts UTF-16 units, two for every
// character outside the Basic Multilingual Plane (emoji, many CJK ideographs). Code that checks or cuts a value
// against a documented bound counts like the document, or it refuses valid values and, when cutting, can split a
// character in two (PostgreSQL stores the lone half as U+FFFD).

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/** The number of characters (code points) of `text`; a lone surrogate counts as one, as Ajv counts it. */
export function characters(text: string): number {
  let n = text.length;
  for (let i = 0; i + 1 < text.length; i++) {
    if (isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1))) {
      n--;
      i++;
    }
  }
  return n;
}

/** The first `max` characters of `text` (never half a surrogate pair); `text` itself when it is not longer. */
export function clampText(text: string, max: number): string {
  if (text.length <= max) return text; // never more characters than UTF-16 units
  let at = 0;
  for (let n = 0; n < max && at < text.length; n++) {
    at += isHigh(text.charCodeAt(at)) && isLow(text.charCodeAt(at + 1)) ? 2 : 1;
  }
  return text.slice(0, at);
}
