// The contact import worker. The stored CSV is streamed through csv-parse; each row is validated (phone with
// libphonenumber, duplicates within the file, cell values) and valid rows are written in batches: each batch's
// new contacts, their tag links and consent entries are COPY'd straight into their tables, and rows of existing
// contacts are COPY'd into a temporary staging table and merged by one set-based statement, all committed
// together with the job's progress. While one batch is being written, the next one is parsed. A re-delivered
// job (crashed worker) resumes after the last committed batch.
import { Readable } from 'node:stream';
import { parse, type CsvError, type Info } from 'csv-parse';
import type { AppContext } from '../../app-context.ts';
import { inCopyTransaction, type CopyIn } from '../../db/copy.ts';
import { inTransaction, type Db } from '../../db/database.ts';
import { bindTenant, loadTenantTables, type TenantDb } from '../../db/tenant.ts';
import * as q from '../../db/queries/contacts/imports.ts';
import { countTags, existingTagIds, insertTagsByName, lockTagCreation, tagsByLowerName } from '../../db/queries/contacts/tags.ts';
import type { ImportColumn, ImportRowError } from '../../db/tables/contacts.ts';
import { isKnownTimeZone } from '../compliance/tcpa.ts';
import { characters } from '../../lib/characters.ts';
import { queueOf } from '../messaging/context.ts';
import { parsePhone } from '../phone.ts';
import { emitEvent } from '../webhooks/events.ts';
import { attributeProblem, MAX_NAME_CHARACTERS, MAX_TAG_NAME_CHARACTERS, mergeAttributes } from './attribute-limits.ts';
import { pieces, type ImportJobData } from './import.ts';
import { MAX_TAGS_PER_CONTACT, MAX_TAGS_PER_ORGANIZATION } from './tags.ts';

/** Rows per batch (and transaction): large enough that a batch's fixed statements cost little per row. */
const BATCH_ROWS = 10_000;
/** The smallest batch: where the sizes start, and the least the last batches are split to (see batchFull). */
const MIN_BATCH_ROWS = 1_000;
const MAX_ERRORS_KEPT = 1000;
const CONSENT_TYPES = new Set(['NONE', 'TRANSACTIONAL', 'MARKETING']);
/** The tag names of a row without tags, shared (never changed). */
const NO_TAGS: readonly string[] = [];

type Row = {
  row: number;
  phone: string;
  country: string | null;
  name?: string;
  timeZone?: string;
  consentType?: string;
  attributes: Record<string, string>;
  /** Tag names of the `tags` cell, distinct case-insensitively. */
  tagNames: readonly string[];
};

type Batch = { rows: Row[]; errors: ImportRowError[]; lastLine: number };

/**
 * Runs (or resumes) an import job, for its organization (a tenant bound to it); a failure is recorded on the job,
 * never thrown.
 */
export async function runImportJob(app: Pick<AppContext, 'db' | 'pool' | 'log' | 'queue'>, data: ImportJobData): Promise<void> {
  const { organizationId: orgId, jobId } = data;
  const tables = await loadTenantTables(app.db);
  // Every statement of the job is bound to its organization, those of the batches' own connections too.
  const bound = (db: Db) => bindTenant(db, orgId, tables);
  const db = bound(app.db);
  const job = await q.startImportJob(db, orgId, jobId);
  if (!job) return; // already ended (or swept)
  const file = await q.importFileOf(db, orgId, jobId);
  try {
    if (!file) throw new Error('the uploaded file is no longer stored');
    const totalRows = await importRows((work) => inCopyTransaction(app.pool, (tx, copy) => work(bound(tx), copy)), job, file);
    await finish(app, db, orgId, jobId, { totalRows, error: null });
  } catch (error) {
    app.log.error({ err: error, jobId }, 'contact import failed');
    await finish(app, db, orgId, jobId, { totalRows: null, error: storable(`Import stopped: ${(error as Error).message}`) });
  }
}

/**
 * Ends the job and raises `contact_import.completed` in the same transaction, so the event is sent if and only
 * if the job's end commits (a re-delivered job that already ended raises nothing: startImportJob refuses it).
 */
function finish(
  app: Pick<AppContext, 'queue'>,
  db: TenantDb,
  orgId: string,
  jobId: string,
  end: { totalRows: number | null; error: string | null },
): Promise<void> {
  return inTransaction(db, async (tx) => {
    const ended = await q.finishImportJob(tx, orgId, jobId, end);
    if (!ended) return;
    await emitEvent(tx, queueOf(app), {
      organizationId: orgId,
      type: 'contact_import.completed',
      data: {
        jobId,
        senderIdId: null,
        contactPhone: null,
        status: ended.status === 'completed' ? 'completed' : 'failed',
        // A file that could not be processed has no total; the rows read before it stopped stand in for it.
        totalRows: ended.total_rows ?? ended.processed_rows,
        created: ended.imported_rows,
        updated: ended.updated_rows,
        skipped: ended.skipped_rows,
        failed: ended.error_count,
        completedAt: (ended.completed_at ?? new Date()).toISOString(),
      },
    });
  });
}

/** A transaction whose statements and COPY streams share one connection. */
type BatchTransaction = (work: (tx: TenantDb, copy: CopyIn) => Promise<void>) => Promise<void>;

/** Parses and writes every row; returns the number of data rows in the file. */
async function importRows(transaction: BatchTransaction, job: q.ImportJobRow, file: Buffer): Promise<number> {
  const read = rowReader(job.columns, job.default_country);
  const resumeAfter = job.lines_done;
  let errorsKept = job.errors.length;
  let dataRows = 0;
  let batch: Batch = { rows: [], errors: [], lastLine: resumeAfter };
  // Two batches in flight, each on its own connection, so both cores work for PostgreSQL; they commit in file
  // order (a batch's progress update waits for the previous commit), which keeps errors in order and makes
  // `lines_done` a committed prefix. A batch resolves its tags only after the previous one has, so the
  // tag-creation lock is always taken in batch order (no wait cycle between the two).
  let previous: BatchWrite = { tagsResolved: Promise.resolve(), committed: Promise.resolve() };
  const phones: PhonesSoFar = { allNew: true };
  const inFlight: BatchWrite[] = [];

  const write = async () => {
    const full = batch;
    batch = { rows: [], errors: [], lastLine: full.lastLine };
    if (inFlight.length === 2) await inFlight.shift()!.committed;
    previous = writeBatch(transaction, job, full, phones, previous, () => {
      const room = Math.max(0, MAX_ERRORS_KEPT - errorsKept);
      errorsKept += Math.min(room, full.errors.length);
      return room;
    });
    previous.committed.catch(() => {}); // awaited below; a failure must not be reported as unhandled meanwhile
    inFlight.push(previous);
  };
  const reject = (line: number, error: ImportRowError) => {
    if (line <= resumeAfter) return; // counted by the run that committed it
    batch.errors.push(error);
    batch.lastLine = Math.max(batch.lastLine, line);
  };

  // csv-parse reports unparseable records through 'skip' while it may be ahead of this loop; they are merged
  // back in line order.
  const skipped: Array<{ line: number; message: string }> = [];
  const parser = Readable.from(pieces(file)).pipe(
    parse({ bom: true, info: true, relax_column_count: true, skip_empty_lines: true, skip_records_with_error: true }),
  );
  let lastSkippedLine = 0;
  parser.on('skip', (err: CsvError) => {
    const line = Number(err.lines ?? 0);
    if (line === lastSkippedLine) return; // one row can raise several errors (e.g. two stray quotes)
    lastSkippedLine = line;
    skipped.push({ line, message: err.message });
  });
  const flushSkipped = (beforeLine: number) => {
    while (skipped.length && skipped[0]!.line < beforeLine) {
      const s = skipped.shift()!;
      dataRows++;
      reject(s.line, { row: Math.max(2, s.line), column: null, value: null, code: 'MALFORMED_ROW', message: storable(s.message) });
    }
  };

  try {
    await readAll();
  } catch (error) {
    await Promise.allSettled(inFlight.map((w) => w.committed)); // settle before the job is marked failed
    throw error;
  }
  for (const w of inFlight) await w.committed;
  return dataRows;

  async function readAll(): Promise<void> {
    let header = true;
    let written = 0;
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: Info }>) {
      const endLine = info.lines;
      const row = endLine - newlinesIn(record);
      flushSkipped(row);
      if (header) {
        header = false;
        continue;
      }
      dataRows++;
      const outcome = read(record, row);
      if ('code' in outcome) {
        reject(endLine, outcome);
      } else if (endLine > resumeAfter) {
        batch.rows.push(outcome);
        batch.lastLine = endLine;
      }
      if (batchFull(batch.rows.length + batch.errors.length, written, ((file.length - info.bytes) * dataRows) / info.bytes)) {
        written++;
        await write();
      }
    }
    flushSkipped(Infinity);
    await write();
  }
}

/**
 * Whether a batch of `rows` is written now, as the batch after `written` others, with about `rowsLeft` rows still
 * unread. Two batches run at once, one per core, so the sizes keep both busy: the first batches are small (1,000
 * rows, doubling up to BATCH_ROWS), so the database starts sooner and the second batch, which waits for the
 * first one's commit when it needs the tags that one creates, waits less; the last ones take half of what is
 * left, so the two connections end together instead of one writing a full last batch alone.
 */
function batchFull(rows: number, written: number, rowsLeft: number): boolean {
  if (rows >= BATCH_ROWS || rows >= MIN_BATCH_ROWS * 2 ** written) return true;
  return rows >= MIN_BATCH_ROWS && rows >= rowsLeft;
}

function newlinesIn(record: string[]): number {
  let n = 0;
  for (const cell of record) for (let i = cell.indexOf('\n'); i !== -1; i = cell.indexOf('\n', i + 1)) n++;
  return n;
}

/** Validates one record: a row to write, or why it is rejected. Remembers phones to report duplicates. */
function rowReader(columns: ImportColumn[], defaultCountry: string | null) {
  const seen = new Map<string, number>();
  const zones = new Map<string, boolean>();
  const at = (target: string) => columns.findIndex((c) => c.target === target);
  const phoneAt = at('phone');
  const nameAt = at('name');
  const tagsAt = at('tags');
  const zoneAt = at('timeZone');
  const consentAt = at('consentType');
  const attributes = columns.flatMap((c, i) =>
    c.target.startsWith('attribute:') ? [{ i, key: c.target.slice('attribute:'.length) }] : [],
  );
  const phoneHeader = columns[phoneAt]!.header;
  /** Columns whose cells are read (ignored ones are never stored, so what they hold does not matter). */
  const used = columns.flatMap((c, i) => (c.target === 'ignore' ? [] : [i]));

  // Helpers of every row, made once (made per row, as closures over it, they were garbage of every row).
  const fail = (record: string[], row: number, code: ImportRowError['code'], column: number | null, message: string): ImportRowError => ({
    row,
    column: column === null ? null : columns[column]!.header,
    value: column === null ? null : storable((record[column] ?? '').slice(0, 200)),
    code,
    message,
  });
  const tooLong = (record: string[], row: number, tag: string) =>
    fail(record, row, 'INVALID_VALUE', tagsAt, `Tag names are at most ${MAX_TAG_NAME_CHARACTERS} characters ("${tag.slice(0, 60)}").`);
  const cellOf = (record: string[], i: number) => (i < 0 ? '' : record[i]!.trim());

  return (record: string[], row: number): Row | ImportRowError => {
    if (record.length !== columns.length)
      return fail(record, row, 'MALFORMED_ROW', null, `Expected ${columns.length} columns, got ${record.length}.`);
    // PostgreSQL text and jsonb cannot hold U+0000 (22021 / 22P05): such a row would fail the whole batch.
    for (const i of used) {
      if (record[i]!.includes('\0'))
        return fail(record, row, 'INVALID_VALUE', i, 'The cell contains a NUL character (U+0000), which cannot be stored.');
    }
    const rawPhone = cellOf(record, phoneAt);
    if (!rawPhone) return fail(record, row, 'MISSING_PHONE', phoneAt, `The ${phoneHeader} cell is empty.`);
    const phone = parsePhone(rawPhone, defaultCountry ?? undefined);
    if (!phone) {
      return fail(
        record,
        row,
        'INVALID_PHONE',
        phoneAt,
        defaultCountry
          ? `Not a valid phone number for ${defaultCountry}.`
          : 'Not a valid international phone number (start with + and the country code, or set defaultCountry).',
      );
    }

    // Every field set here, in one order: rows of one shape (properties added later made several).
    const out: Row = {
      row,
      phone: phone.e164,
      country: phone.country,
      name: undefined,
      timeZone: undefined,
      consentType: undefined,
      attributes: {},
      tagNames: NO_TAGS,
    };
    const name = cellOf(record, nameAt);
    // The document's bounds, in its characters (code points): a cell over one is a rejected row, never a cut value.
    if (characters(name) > MAX_NAME_CHARACTERS)
      return fail(record, row, 'INVALID_VALUE', nameAt, `Names are at most ${MAX_NAME_CHARACTERS} characters.`);
    if (name) out.name = name;
    const zone = cellOf(record, zoneAt);
    if (zone) {
      if (!zones.has(zone)) zones.set(zone, /^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)*$/.test(zone) && zone.length <= 64 && isKnownTimeZone(zone));
      if (!zones.get(zone)) return fail(record, row, 'INVALID_VALUE', zoneAt, `Unknown IANA time zone "${zone}".`);
      out.timeZone = zone;
    }
    const consent = cellOf(record, consentAt).toUpperCase();
    if (consent) {
      if (!CONSENT_TYPES.has(consent))
        return fail(record, row, 'INVALID_VALUE', consentAt, 'consentType must be NONE, TRANSACTIONAL or MARKETING.');
      out.consentType = consent;
    }
    for (const { i, key } of attributes) {
      const value = cellOf(record, i);
      const problem = attributeProblem(key, value);
      if (problem) return fail(record, row, 'INVALID_VALUE', i, problem.message);
      if (value) out.attributes[key] = value;
    }
    const tags = cellOf(record, tagsAt);
    // Most cells hold no tag or one (no split, no map: an import allocates ~1 KB per row, and the garbage
    // collector's time follows it).
    if (tags && !tags.includes(';')) {
      if (characters(tags) > MAX_TAG_NAME_CHARACTERS) return tooLong(record, row, tags);
      out.tagNames = [tags];
    } else if (tags) {
      const names = new Map<string, string>();
      for (const part of tags.split(';')) {
        const tag = part.trim();
        if (!tag) continue;
        if (characters(tag) > MAX_TAG_NAME_CHARACTERS) return tooLong(record, row, tag);
        if (!names.has(tag.toLowerCase())) names.set(tag.toLowerCase(), tag);
      }
      out.tagNames = [...names.values()];
    }

    const first = seen.get(out.phone);
    if (first !== undefined) return fail(record, row, 'DUPLICATE_IN_FILE', phoneAt, `Same phone as row ${first}.`);
    seen.set(out.phone, row);
    return out;
  };
}

type BatchWrite = { tagsResolved: Promise<void>; committed: Promise<void> };

/** Whether every phone the job's batches have written so far was new to the organization (see writeRows). */
type PhonesSoFar = { allNew: boolean };

/** Writes one batch and its share of the job's progress in one transaction, committed after `previous`. */
function writeBatch(
  transaction: BatchTransaction,
  job: q.ImportJobRow,
  batch: Batch,
  phones: PhonesSoFar,
  previous: BatchWrite,
  errorRoom: () => number,
): BatchWrite {
  let tagsDone!: () => void;
  const tagsResolved = new Promise<void>((resolve) => (tagsDone = resolve));
  const committed = (async () => {
    try {
      await previous.tagsResolved;
      await transaction((tx, copy) =>
        writeRows(tx, copy, job, batch, phones, tagsDone, async () => {
          await previous.committed; // a failed previous batch rolls this one back too
          return errorRoom();
        }),
      );
    } finally {
      tagsDone();
    }
  })();
  return { tagsResolved, committed };
}

/**
 * The batch's statements: tags, then up to three rounds of lock → COPY of the new contacts (with their tag links
 * and consent entries) → COPY of the rest into staging → merge, then the job's progress. `tagsDone` is called once
 * the batch's tags exist; `beforeProgress` waits for the previous batch's commit and tells how many errors may
 * still be kept.
 */
async function writeRows(
  tx: TenantDb,
  copy: CopyIn,
  job: q.ImportJobRow,
  batch: Batch,
  phones: PhonesSoFar,
  tagsDone: () => void,
  beforeProgress: () => Promise<number>,
): Promise<void> {
  const orgId = job.organization_id;
  // Foreign keys are checked by PostgreSQL row by row, for every database role alike (issue 36: skipping them under
  // a superuser role made the import's behaviour depend on the role). Tags are read FOR KEY SHARE and existing
  // contacts locked FOR UPDATE (lockContactsByPhone) so that concurrent deletes wait for the batch, not fail it.
  const tagIdOf = await resolveTags(tx, orgId, batch.rows);
  tagsDone();
  const jobTags = [...(await existingTagIds(tx, orgId, job.tag_ids))];
  const errors = [...batch.errors];
  const counts = { imported: 0, updated: 0, skipped: 0 };

  // Each row's tags as ids; a row whose new tag could not be created (1,000-tag cap) is rejected.
  let pending: Array<{ row: Row; tagIds: string[] }> = [];
  for (const row of batch.rows) {
    const missing = row.tagNames.find((n) => !tagIdOf.has(n.toLowerCase()));
    if (missing) {
      errors.push(
        rowError(
          row,
          'INVALID_VALUE',
          'tags',
          missing,
          `Tag "${missing}" cannot be created: the organization has ${MAX_TAGS_PER_ORGANIZATION} tags.`,
        ),
      );
      continue;
    }
    // The row's names are distinct without case, so their ids are too: only the job's tags can repeat one.
    const own = row.tagNames.map((n) => tagIdOf.get(n.toLowerCase())!);
    pending.push({ row, tagIds: jobTags.length === 0 ? own : [...new Set([...own, ...jobTags])] });
  }

  // While every phone of the job so far was new, the batch skips looking its phones up (0.35 s of database CPU
  // over the bench's 150,000 rows) and COPYs them all as new contacts: the unique key on (organization, phone)
  // either proves them new, which is what the lookup would have found, or refuses the COPY (nothing of it kept),
  // and then this batch and the job's next ones take the lookup path.
  if (phones.allNew && pending.length > 0) {
    const fresh: q.StagedRow[] = [];
    const rejected: ImportRowError[] = [];
    for (const { row, tagIds } of pending) {
      const plan = planRow(row, tagIds, undefined);
      if ('code' in plan) rejected.push(plan);
      else fresh.push(plan);
    }
    if (await q.copyNewContacts(tx, copy, orgId, fresh, job.actor)) {
      errors.push(...rejected);
      counts.imported += fresh.length;
      pending = [];
    } else {
      phones.allNew = false;
    }
  }

  // A phone created by someone else between our read and our write is retried as an existing contact.
  for (let round = 0; pending.length > 0; round++) {
    if (round === 3) throw new Error('contacts keep changing under the import; try again');
    const existing = new Map(
      (
        await q.lockContactsByPhone(
          tx,
          orgId,
          pending.map((p) => p.row.phone),
        )
      ).map((c) => [c.phone, c]),
    );
    if (existing.size > 0) phones.allNew = false;
    let writes: q.StagedRow[] = [];
    for (const { row, tagIds } of pending) {
      const current = existing.get(row.phone);
      const plan = planRow(row, tagIds, current);
      if ('code' in plan) errors.push(plan);
      else if (plan.unchanged) counts.skipped++;
      else writes.push(plan);
    }
    if (writes.length === 0) break;
    // Contacts new at the lock go in by plain COPY; only if one of their phones appeared since then do they join
    // the merge, which sorts that out row by row.
    const fresh = writes.filter((w) => !existing.has(w.phone));
    if (await q.copyNewContacts(tx, copy, orgId, fresh, job.actor)) {
      counts.imported += fresh.length;
      writes = writes.filter((w) => existing.has(w.phone));
      if (writes.length === 0) break;
    }
    await q.stageRows(tx, copy, writes);
    const merged = await q.mergeStagedRows(
      tx,
      orgId,
      [...existing.values()].map((c) => c.id),
      job.actor,
    );
    counts.imported += merged.inserted;
    counts.updated += merged.updated;
    const retry = new Set(merged.missing);
    pending = pending.filter((p) => retry.has(p.row.phone));
  }

  errors.sort((a, b) => a.row - b.row);
  const room = await beforeProgress();
  await q.addImportProgress(tx, orgId, job.id, {
    ...counts,
    errorCount: errors.length,
    errors: errors.slice(0, room),
    linesDone: batch.lastLine,
  });
}

/**
 * The row's effect on the contact with its phone (or a new one): its merged values and tags to add, as the batch's
 * statements take them (one object a row: an import allocates per row, and the garbage collector's time follows
 * it), and whether nothing changes; or a rejection.
 */
function planRow(
  row: Row,
  tagIds: string[],
  current: q.ExistingContact | undefined,
): (q.StagedRow & { unchanged: boolean }) | ImportRowError {
  const carried = current && current.tag_ids.length > 0 ? new Set(current.tag_ids) : undefined;
  const newTags = carried ? tagIds.filter((t) => !carried.has(t)) : tagIds;
  const carriedCount = carried?.size ?? 0;
  if (carriedCount + newTags.length > MAX_TAGS_PER_CONTACT) {
    return rowError(
      row,
      'TOO_MANY_TAGS',
      'tags',
      null,
      `The contact would carry ${carriedCount + newTags.length} tags; at most ${MAX_TAGS_PER_CONTACT}.`,
    );
  }
  const { attributes, problems } = mergeAttributes(current?.attributes ?? {}, row.attributes);
  if (problems.length > 0) return rowError(row, 'INVALID_VALUE', null, null, problems[0]!.message);
  const name = row.name ?? current?.name ?? null;
  const timeZone = row.timeZone ?? current?.time_zone ?? null;
  const consentType = row.consentType ?? current?.consent_type ?? 'NONE';
  const consentChanged = consentType !== (current?.consent_type ?? 'NONE');
  const unchanged =
    current !== undefined &&
    newTags.length === 0 &&
    !consentChanged &&
    name === current.name &&
    timeZone === current.time_zone &&
    Object.entries(row.attributes).every(([k, v]) => current.attributes[k] === v);
  return { phone: row.phone, country: row.country, name, timeZone, consentType, attributes, newTagIds: newTags, consentChanged, unchanged };
}

function rowError(row: Row, code: ImportRowError['code'], column: string | null, value: string | null, message: string): ImportRowError {
  return { row: row.row, column, value: value === null ? null : value.slice(0, 200), code, message };
}

/** Text PostgreSQL can store (the job's errors are jsonb): U+0000 shown as U+FFFD, the replacement character. */
function storable(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text;
}

/**
 * Tag ids by lower-case name for every name the batch uses, creating the missing ones (one statement) within
 * the organization's 1,000-tag cap. Names left out of the map could not be created.
 */
async function resolveTags(db: TenantDb, orgId: string, rows: Row[]): Promise<Map<string, string>> {
  const wanted = new Map<string, string>();
  for (const r of rows) for (const n of r.tagNames) if (!wanted.has(n.toLowerCase())) wanted.set(n.toLowerCase(), n);
  const ids = new Map<string, string>();
  if (wanted.size === 0) return ids;
  const remember = (tags: Array<{ id: string; name: string }>) => tags.forEach((t) => ids.set(t.name.toLowerCase(), t.id));
  remember(await tagsByLowerName(db, orgId, [...wanted.keys()]));
  const missing = [...wanted].filter(([lower]) => !ids.has(lower)).map(([, name]) => name);
  if (missing.length === 0) return ids;
  await lockTagCreation(db, orgId);
  const room = Math.max(0, MAX_TAGS_PER_ORGANIZATION - (await countTags(db, orgId)));
  remember(await insertTagsByName(db, orgId, missing.slice(0, room)));
  // Names created by someone else since the first read.
  remember(
    await tagsByLowerName(
      db,
      orgId,
      missing.filter((n) => !ids.has(n.toLowerCase())).map((n) => n.toLowerCase()),
    ),
  );
  return ids;
}
