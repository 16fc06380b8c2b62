// The one CSV writer of the server (RFC 4180), used by every CSV it sends: the compliance reports, the message
// report and the analytics exports and reports (whole, toCsv, or streamed in batches, csvChunks). A field is
// quoted when it holds a comma, a double quote, CR or LF, or starts or ends with a space; quotes inside are
// doubled. Lines end with CRLF. null/undefined are empty cells.
//
// Formula injection (CSV injection, OWASP): a spreadsheet opening the file runs a cell that starts with `=`,
// `+`, `-` or `@` as a formula (`=HYPERLINK(…)`, `=cmd|' /C calc'!A0`), and a leading tab or carriage return
// can hide such a cell from a naive check. Such a string cell is neutralised with a leading single quote `'`
// (shown as text by spreadsheets) and then quoted as RFC 4180 requires.
//
// What is not neutralised, on purpose:
// - Values the server writes as numbers (JS `number`/`bigint`, e.g. segments, -5): OWASP neutralises strings;
//   a number is written by the server itself, never a formula.
// - A string that is only a plain number: an optional sign, digits, optionally a decimal point and digits
//   (`+14155550123`, `-0.0039`). It holds no function, reference or operator after the sign, so a spreadsheet
//   can only read it as a number; prefixing it would corrupt every E.164 phone and every amount in the reports.
export type CsvValue = string | number | bigint | boolean | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?\d+(\.\d+)?$/;
const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

/** The cell as written: formula-like strings prefixed with `'`, then quoted where RFC 4180 needs it. */
export function csvField(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  const s = FORMULA_START.test(value) && !PLAIN_NUMBER.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** A header row of `columns`, then one line per row (cells in column order), each line ending with CRLF. */
export function toCsv(columns: readonly string[], rows: ReadonlyArray<Record<string, CsvValue>>): string {
  let csv = `${columns.map(csvField).join(',')}\r\n`;
  for (const row of rows) csv += csvLine(columns, row);
  return csv;
}

/** One data line of `row` (cells in column order), ending with CRLF. */
function csvLine(columns: readonly string[], row: Record<string, CsvValue>): string {
  return `${columns.map((c) => csvField(row[c])).join(',')}\r\n`;
}

/**
 * The streaming form of toCsv: the header, then the lines of each batch as the batches come (a database read in
 * keyset pages), one chunk per batch. The first chunk holds the header and the first batch, so a caller that
 * awaits it before answering learns of a failing first read while it can still choose the status.
 */
export async function* csvChunks(
  columns: readonly string[],
  batches: AsyncIterable<ReadonlyArray<Record<string, CsvValue>>> | Iterable<ReadonlyArray<Record<string, CsvValue>>>,
): AsyncGenerator<string, void, undefined> {
  let pending = `${columns.map(csvField).join(',')}\r\n`;
  for await (const batch of batches) {
    let chunk = pending;
    pending = '';
    for (const row of batch) chunk += csvLine(columns, row);
    if (chunk) yield chunk;
  }
  if (pending) yield pending;
}
