// What a contact may hold, as the document says (`ContactAttributes`, `ContactAttributeValue`, `ContactName`): every
// write path checks what it is about to store against these, so no read ever meets a contact its own response
// schema refuses (a contact with 150 attributes made GET /v1/contacts answer 500). Pure functions: the caller
// decides whether a problem is a 400 (an API body) or a form error (a landing page).
import type { FieldError } from '../errors.ts';

/** `ContactAttributes.maxProperties`. */
export const MAX_CONTACT_ATTRIBUTES = 100;
/** `ContactAttributeValue.maxLength` (strings). */
export const MAX_ATTRIBUTE_VALUE_CHARS = 1000;
/** `ContactName.maxLength`. */
export const MAX_CONTACT_NAME_CHARS = 200;

type Attributes = Readonly<Record<string, unknown>>;

/** The number of keys `current` would hold once `incoming` is merged into it (existing keys overwritten). */
export function mergedAttributeCount(current: Attributes, incoming: Attributes): number {
  return Object.keys(current).length + Object.keys(incoming).filter((k) => !Object.hasOwn(current, k)).length;
}

/**
 * The problems of merging `incoming` into a contact's `current` attributes, as field errors under `field`
 * (`body.attributes`): too many keys once merged, or a string value longer than an attribute holds.
 */
export function attributeMergeProblems(current: Attributes, incoming: Attributes, field: string): FieldError[] {
  const problems: FieldError[] = [];
  const count = mergedAttributeCount(current, incoming);
  if (count > MAX_CONTACT_ATTRIBUTES) {
    problems.push({ field, code: 'max_properties', message: `the contact would hold ${count} attributes; at most ${MAX_CONTACT_ATTRIBUTES}` });
  }
  for (const [key, value] of Object.entries(incoming)) {
    if (typeof value === 'string' && value.length > MAX_ATTRIBUTE_VALUE_CHARS) {
      problems.push({ field: `${field}.${key}`, code: 'max_length', message: `at most ${MAX_ATTRIBUTE_VALUE_CHARS} characters` });
    }
  }
  return problems;
}
