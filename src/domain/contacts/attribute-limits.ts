// What a contact may hold, in the document's numbers (read from it: ContactName, ContactAttributes,
// ContactAttributeKey, ContactAttributeValue, Tag), and the one check every write path that stores contact
// fields goes through, so that GET /v1/contacts, GET /v1/contacts/{id} and POST /v1/segments/preview never meet a
// stored value their response schema refuses. Lengths are characters as the document counts them (code points).
//
// Requests to the API itself (createContact, replaceContact) are checked by the document's validation before
// they reach the domain; this module is for what arrives otherwise (a CSV file, a merge of new attributes over
// stored ones). Each path decides what a violation does: refused (the caller answers 400/422, or rejects the
// import row with its reason), or clamped with clampText where refusing would lose what a person sent.
import { schemaBound, schemaPattern } from '../../contract/schema-bounds.ts';
import type { AttributeValue } from '../../db/tables/contacts.ts';
import { characters } from '../../lib/characters.ts';
import type { FieldError } from '../errors.ts';

/** ContactName maxLength (200). */
export const MAX_NAME_CHARACTERS = schemaBound('ContactName', [], 'maxLength');
/** ContactAttributes maxProperties (100). */
const MAX_ATTRIBUTES = schemaBound('ContactAttributes', [], 'maxProperties');
/** ContactAttributeValue maxLength (1,000), for string values. */
export const MAX_ATTRIBUTE_VALUE_CHARACTERS = schemaBound('ContactAttributeValue', [], 'maxLength');
/** Tag name maxLength (50). */
export const MAX_TAG_NAME_CHARACTERS = schemaBound('Tag', ['name'], 'maxLength');
/** ContactAttributeKey pattern (which bounds its length too: 1-64). */
export const ATTRIBUTE_KEY = schemaPattern('ContactAttributeKey');

export type { AttributeValue };

/** Why an attribute set cannot be stored: `key` names the attribute at fault, null when it is the key count. */
export type AttributeProblem = { key: string | null; message: string };

/** The problem of one attribute (key and value), or undefined when it may be stored. */
export function attributeProblem(key: string, value: unknown): AttributeProblem | undefined {
  if (!ATTRIBUTE_KEY.test(key))
    return { key, message: `"${key.slice(0, 80)}" is not an attribute key (1-64 letters, digits, _ . -, starting with a letter or _).` };
  if (value !== null && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
    return { key, message: `Attribute ${key} must be a string, number, boolean or null.` };
  if (typeof value === 'number' && !Number.isFinite(value)) return { key, message: `Attribute ${key} must be a finite number.` };
  if (typeof value === 'string' && characters(value) > MAX_ATTRIBUTE_VALUE_CHARACTERS) {
    return {
      key,
      message: `Attribute values are at most ${MAX_ATTRIBUTE_VALUE_CHARACTERS.toLocaleString('en-US')} characters (${key} has ${characters(value).toLocaleString('en-US')}).`,
    };
  }
  return undefined;
}

/**
 * `incoming` merged over `current` (an incoming key replaces its value, the others stay), as a contact would hold
 * it, with every problem of the incoming attributes and of the merged key count. Nothing is stored by this: a
 * caller with problems refuses the write (or clamps and merges again).
 */
export function mergeAttributes(
  current: Readonly<Record<string, AttributeValue>>,
  incoming: Readonly<Record<string, unknown>>,
): { attributes: Record<string, AttributeValue>; problems: AttributeProblem[] } {
  const problems: AttributeProblem[] = [];
  for (const [key, value] of Object.entries(incoming)) {
    const problem = attributeProblem(key, value);
    if (problem) problems.push(problem);
  }
  const attributes = { ...current, ...(incoming as Record<string, AttributeValue>) };
  const count = Object.keys(attributes).length;
  if (count > MAX_ATTRIBUTES)
    problems.push({ key: null, message: `The contact would have ${count} attributes; at most ${MAX_ATTRIBUTES}.` });
  return { attributes, problems };
}

/**
 * mergeAttributes' problems as field errors under `field` (`body.attributes`), for a write path that refuses: a
 * problem of one attribute names it (`body.attributes.<key>`), the key count names the map.
 */
export function attributeMergeProblems(
  current: Readonly<Record<string, AttributeValue>>,
  incoming: Readonly<Record<string, unknown>>,
  field: string,
): FieldError[] {
  return mergeAttributes(current, incoming).problems.map((p) => ({
    field: p.key === null ? field : `${field}.${p.key}`,
    code: p.key === null ? 'max_properties' : 'invalid',
    message: p.message,
  }));
}
