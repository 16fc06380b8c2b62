// The numbered placeholders of a chat-app template (`{{1}}`, `{{2}}` …) and how they are addressed, one rule for
// registration (every placeholder has an example) and for sending (every placeholder has a value):
// - HEADER (TEXT) and BODY: `{{n}}` in the text, numbered from 1 without gaps; addressed `{component, index: n}`;
// - BUTTONS: a URL button whose `url` ends in `{{1}}` takes a suffix at send time; addressed
//   `{component: BUTTONS, index: <the button's position, from 1>}`.
import type { StoredTemplateComponent } from '../../db/tables/templates.ts';

type PlaceholderComponent = 'HEADER' | 'BODY' | 'BUTTONS';
export type Placeholder = { component: PlaceholderComponent; index: number };

const PLACEHOLDER = /\{\{(\d+)\}\}/g;
export const URL_SUFFIX = '{{1}}';

/** The placeholder numbers of a text, in order of appearance (repeats kept). */
export const numbersIn = (text: string): number[] => [...text.matchAll(PLACEHOLDER)].map((m) => Number(m[1]));

/** `BODY {{2}}`, `BUTTONS 1` — how a placeholder is named in messages. */
export const placeholderName = (p: Placeholder): string =>
  p.component === 'BUTTONS' ? `the URL suffix of button ${p.index}` : `${p.component} {{${p.index}}}`;

export const placeholderKey = (p: Placeholder): string => `${p.component}.${p.index}`;

/** Every placeholder of a (valid) template, HEADER first, then BODY, then BUTTONS. */
export function placeholdersOf(components: readonly StoredTemplateComponent[]): Placeholder[] {
  const out: Placeholder[] = [];
  for (const type of ['HEADER', 'BODY'] as const) {
    const text = components.find((c) => c.type === type)?.text ?? '';
    for (const n of [...new Set(numbersIn(text))].sort((a, b) => a - b)) out.push({ component: type, index: n });
  }
  const buttons = components.find((c) => c.type === 'BUTTONS')?.buttons ?? [];
  buttons.forEach((b, i) => {
    if (b.type === 'URL' && b.url?.endsWith(URL_SUFFIX)) out.push({ component: 'BUTTONS', index: i + 1 });
  });
  return out;
}

/** Replaces each `{{n}}` of `text` by `value(n)`. */
export const fill = (text: string, value: (n: number) => string): string => text.replace(PLACEHOLDER, (_, n: string) => value(Number(n)));
