// Visitor-supplied names. A public form is anyone's: its `name` went verbatim into a billed welcome text ("Welcome
// Bank alert: your card is locked, verify at https://evil.example/x"). So a name is rendered into a text only when
// it is a plain name, and stored without control or invisible characters.
//
// The rule (documented on AcquisitionCampaign.welcomeMessage): at most 40 characters and 4 words, separated by
// single spaces; a word is letters (with their combining marks), possibly joined by `'`, `’` or `-` between two
// letters (O'Neil, Mary-Jane) and possibly ending in `.` (J., Jr.). Digits, `/`, `:`, `@`, a `.` inside a word
// (evil.example) or anything else fail it, and the name is then rendered as nothing.

const MAX_RENDERED_NAME_CHARS = 40;
const MAX_RENDERED_NAME_WORDS = 4;
const WORD = String.raw`\p{L}[\p{L}\p{M}]*(?:['’-]\p{L}[\p{L}\p{M}]*)*\.?`;
const PLAIN_NAME = new RegExp(`^${WORD}(?: ${WORD}){0,${MAX_RENDERED_NAME_WORDS - 1}}$`, 'u');

/**
 * Format/invisible characters (Cf: zero-width, bidi overrides) removed, control characters (Cc: newlines, tabs,
 * escapes) and line/paragraph separators made spaces, runs of white space one space; trimmed.
 */
function cleanText(value: string): string {
  return value
    .normalize('NFC')
    .replace(/\p{Cf}/gu, '')
    .replace(/[\p{Cc}\p{Zl}\p{Zp}]/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
}

/** The name to store: cleaned, at most `max` characters; null when nothing is left. */
export function storedName(value: string | null | undefined, max: number): string | null {
  if (value === null || value === undefined) return null;
  const cleaned = [...cleanText(value)].slice(0, max).join('').trim();
  return cleaned === '' ? null : cleaned;
}

/** The name as it may appear in a text, or null when it is not a plain name. */
function plainName(value: string | null | undefined): string | null {
  if (!value) return null;
  const cleaned = cleanText(value);
  return [...cleaned].length <= MAX_RENDERED_NAME_CHARS && PLAIN_NAME.test(cleaned) ? cleaned : null;
}

/**
 * The campaign's welcome text for this name: `{{name}}` → the plain name or nothing; then the spaces left before
 * punctuation, and a comma left before `!`, `?` or `.`, are dropped ("Welcome, {{name}}!" → "Welcome!").
 */
export const renderWelcome = (template: string, name: string | null): string =>
  template
    .replaceAll('{{name}}', plainName(name) ?? '')
    .replace(/ +([,.!?])/g, '$1')
    .replace(/,([.!?])/g, '$1');
