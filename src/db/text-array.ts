// text[] columns (an API key's scopes, a contact's tags …) as JavaScript arrays, parsed without pg-types' general
// array parser where PostgreSQL's output needs none of it. postgres-array walks the text a character at a time,
// pushing each character into an array and joining it: for an owner key's ~70 scopes that was ~32 KB of garbage
// and ~7 % of the API process's CPU on GET /v1/api-keys (bench part b, issue 38).
//
// PostgreSQL quotes an element that is empty, is NULL's spelling, or holds a space, a comma, a quote, a backslash
// or a brace; an unquoted NULL is the null element. So text with no quote, backslash or inner brace is one
// dimension of plain elements separated by commas, and is split; anything else (quoted elements, several
// dimensions, explicit bounds `[0:1]={…}`) takes pg-types' parser.
import pg from 'pg';

/** text[]'s type id (pg-types lists only scalar types' ids in its TypeId). */
const TEXT_ARRAY_OID = 1009 as TypeId;
type TypeId = Parameters<typeof pg.types.getTypeParser>[0];

export function parseTextArray(text: string): Array<string | null> {
  const plain =
    text.charCodeAt(0) === 123 /* { */ &&
    text.charCodeAt(text.length - 1) === 125 /* } */ &&
    text.indexOf('"') === -1 &&
    text.indexOf('\\') === -1 &&
    text.indexOf('{', 1) === -1 &&
    text.indexOf('}') === text.length - 1;
  if (!plain) return (pg.types.getTypeParser(TEXT_ARRAY_OID, 'text') as (value: string) => Array<string | null>)(text);
  if (text.length === 2) return [];
  const elements: Array<string | null> = text.slice(1, -1).split(',');
  for (let i = 0; i < elements.length; i++) if (elements[i] === 'NULL') elements[i] = null;
  return elements;
}

/** The pool's type parsers: pg's own, text[] through parseTextArray. */
export const typeParsers = {
  getTypeParser: ((oid: TypeId, format?: 'text' | 'binary') =>
    oid === TEXT_ARRAY_OID && format !== 'binary' ? parseTextArray : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};
