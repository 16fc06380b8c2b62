// Contact imports (POST /v1/contacts/import): everything that can be checked before the job starts is checked
// here (400/404, and nothing is stored on failure); then the upload, the job row and the pg-boss job are written
// in one transaction. Rows are handled by the worker (import-worker.ts).
import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { isSupportedCountry } from 'libphonenumber-js/max';
import { fromKysely } from 'pg-boss';
import type { components } from '../../../generated/api.d.ts';
import { inTransaction } from '../../db/database.ts';
import * as q from '../../db/queries/contacts/imports.ts';
import type { ImportColumn } from '../../db/tables/contacts.ts';
import { QUEUES } from '../../jobs/queue-names.ts';
import { found, invalidField } from '../errors.ts';
import type { UploadedFile } from '../files.ts';
import type { Services, Tenant } from '../tenant.ts';
import { ATTRIBUTE_KEY } from './attribute-limits.ts';
import { requireTags } from './tags.ts';

export type ImportJobRow = q.ImportJobRow;

const IMPORT_QUEUE = QUEUES.contactImport;

type ImportRequest = components['schemas']['ContactImportRequest'];
export type ImportJobData = { organizationId: string; jobId: string };

const FIELDS = ['phone', 'name', 'tags', 'timeZone', 'consentType'] as const;

/**
 * The widest header accepted. A contact holds 5 fields and at most 100 attributes (the document's cap), so 200
 * leaves room for as many ignored columns again; a wider file cannot be imported usefully, and refusing it here
 * keeps a 10 MB upload with tens of thousands of columns from costing anything beyond reading its first line.
 */
const MAX_IMPORT_COLUMNS = 200;

/** The buffer in 64 KiB pieces, so the parser streams with backpressure instead of one 10 MB synchronous pass. */
export function* pieces(data: Buffer, size = 64 * 1024): Generator<Buffer> {
  for (let at = 0; at < data.length; at += size) yield data.subarray(at, at + size);
}

/**
 * Columns of the first non-empty record, counted on the bytes (commas outside double quotes) without building
 * it: a 10 MB header of commas would otherwise cost seconds and hundreds of MB in the parser before the cap
 * could refuse it.
 */
function headerWidth(data: Buffer): number {
  const COMMA = 0x2c,
    QUOTE = 0x22,
    CR = 0x0d,
    LF = 0x0a;
  let at = data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf ? 3 : 0; // UTF-8 BOM
  while (data[at] === CR || data[at] === LF) at++; // skip_empty_lines
  let width = 1;
  let quoted = false;
  for (; at < data.length; at++) {
    const b = data[at];
    if (b === QUOTE)
      quoted = !quoted; // a doubled quote toggles twice
    else if (quoted) continue;
    else if (b === COMMA) width++;
    else if (b === CR || b === LF) break;
  }
  return width;
}

const tooWide = (width: number) => invalidField('body.file', `the header row has ${width} columns; at most ${MAX_IMPORT_COLUMNS}`);

/** The CSV header row (first record); 400 when it is wider than MAX_IMPORT_COLUMNS. */
export async function readHeader(data: Buffer): Promise<string[]> {
  const width = headerWidth(data);
  if (width > MAX_IMPORT_COLUMNS) throw tooWide(width);
  const parser = Readable.from(pieces(data)).pipe(parse({ bom: true, to: 1, skip_empty_lines: true }));
  try {
    for await (const record of parser as AsyncIterable<string[]>) return record;
  } catch (error) {
    throw invalidField('body.file', `the header row cannot be parsed: ${(error as Error).message}`);
  } finally {
    parser.destroy();
  }
  throw invalidField('body.file', 'the file is empty: a header row is required');
}

/** Where each column goes, from `mapping` or, without it, from the header names (rules in the document). */
export function resolveColumns(header: string[], mappingText: string | undefined): ImportColumn[] {
  if (header.length > MAX_IMPORT_COLUMNS) throw tooWide(header.length);
  const nul = header.findIndex((h) => h.includes('\0'));
  if (nul >= 0) throw invalidField('body.file', `header column ${nul + 1} contains a NUL character (U+0000)`);
  const columns = mappingText === undefined ? autoMapping(header) : explicitMapping(header, mappingText);
  const field = mappingText === undefined ? 'body.file' : 'body.mapping';
  const targets = columns.map((c) => c.target).filter((t) => t !== 'ignore');
  const phones = targets.filter((t) => t === 'phone').length;
  if (phones !== 1) {
    throw invalidField(field, phones === 0 ? 'no column maps to phone' : `${phones} columns map to phone; exactly one must`);
  }
  const seen = new Set<string>();
  for (const t of targets) {
    if (seen.has(t)) throw invalidField(field, `more than one column maps to ${t}`);
    seen.add(t);
  }
  return columns;
}

function autoMapping(header: string[]): ImportColumn[] {
  return header.map((raw) => {
    const h = raw.trim();
    const field = FIELDS.find((f) => f.toLowerCase() === h.toLowerCase());
    if (field) return { header: raw, target: field };
    if (h.toLowerCase().startsWith('attribute:') && ATTRIBUTE_KEY.test(h.slice('attribute:'.length))) {
      return { header: raw, target: `attribute:${h.slice('attribute:'.length)}` };
    }
    return { header: raw, target: ATTRIBUTE_KEY.test(h) ? `attribute:${h}` : 'ignore' };
  });
}

function explicitMapping(header: string[], text: string): ImportColumn[] {
  let mapping: unknown;
  try {
    mapping = JSON.parse(text);
  } catch {
    throw invalidField('body.mapping', 'is not valid JSON');
  }
  if (typeof mapping !== 'object' || mapping === null || Array.isArray(mapping)) {
    throw invalidField('body.mapping', 'must be a JSON object mapping header names to targets');
  }
  const entries = Object.entries(mapping as Record<string, unknown>);
  const names = new Set(header);
  for (const [name, target] of entries) {
    if (!names.has(name)) throw invalidField('body.mapping', `unknown header "${name}"`);
    if (typeof target !== 'string' || !isTarget(target)) {
      throw invalidField(
        'body.mapping',
        `"${name}": unknown target ${JSON.stringify(target)} (phone, name, tags, timeZone, consentType, attribute:<key> or ignore)`,
      );
    }
  }
  const chosen = new Map(entries as Array<[string, string]>);
  // A header that appears twice in the file gets the mapping on its first column only.
  const mapped = new Set<string>();
  return header.map((h) => {
    const first = !mapped.has(h);
    mapped.add(h);
    return { header: h, target: first ? (chosen.get(h) ?? 'ignore') : 'ignore' };
  });
}

function isTarget(t: string): boolean {
  return (
    t === 'ignore' ||
    (FIELDS as readonly string[]).includes(t) ||
    (t.startsWith('attribute:') && ATTRIBUTE_KEY.test(t.slice('attribute:'.length)))
  );
}

/** Checks the upload and queues the import; the job as accepted. */
export async function startImport(tenant: Tenant, services: Services, body: ImportRequest, files: UploadedFile[]): Promise<ImportJobRow> {
  const orgId = tenant.organizationId;
  const file = files.find((f) => f.field === 'file');
  if (!file) throw invalidField('body.file', 'must be a file part');
  const columns = resolveColumns(await readHeader(file.data), body.mapping);
  if (body.defaultCountry && !isSupportedCountry(body.defaultCountry)) {
    throw invalidField('body.defaultCountry', `unknown or unsupported country ${body.defaultCountry}`);
  }
  const queue = services.queue;
  if (!queue) throw new Error('contact imports need the job queue');
  return inTransaction(tenant.db, async (tx) => {
    const tagIds = body.tagIds ? await requireTags(tx, orgId, body.tagIds.split(','), 'body.tagIds', () => 'body.tagIds') : [];
    const job = await q.insertImportJob(tx, orgId, {
      // PostgreSQL text cannot hold U+0000; the name is only shown back, so it is kept recognisable.
      fileName: file.filename ? file.filename.replaceAll('\0', '\uFFFD') : null,
      columns,
      defaultCountry: body.defaultCountry ?? null,
      tagIds,
      actor: tenant.apiKeyId ?? null,
      data: file.data,
    });
    await queue.send(IMPORT_QUEUE, { organizationId: orgId, jobId: job.id } satisfies ImportJobData, { db: fromKysely(tx) });
    return job;
  });
}

export async function getImportJob(tenant: Tenant, jobId: string): Promise<ImportJobRow> {
  return found(await q.getImportJob(tenant.db, tenant.organizationId, jobId), 'Import job');
}
