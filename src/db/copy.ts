// COPY … FROM STDIN next to ordinary queries, on one connection and in one transaction. Kysely does not expose
// its pg client, so a pooled client is checked out here and wrapped as a one-connection pool for a Kysely
// handle: the handle's statements and the COPY streams share the session (temporary tables, the transaction).
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { inTransaction, type Db, type Tx } from './database.ts';
import type { Database } from './schema.ts';

/** Streams text-format COPY rows (built with copyRow and copyField) into the statement `copy … from stdin`. */
export type CopyIn = (statement: string, rows: Iterable<string>) => Promise<void>;

/** Runs `work` in one transaction whose Kysely handle and COPY streams use the same connection. */
export async function inCopyTransaction<T>(pool: pg.Pool, work: (tx: Tx, copy: CopyIn) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  const session = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: { connect: async () => ({ query: client.query.bind(client), release: () => {} }), end: async () => {} } as never,
    }),
  });
  const copy: CopyIn = (statement, rows) => pipeline(Readable.from(chunked(rows)), client.query(copyFrom(statement)));
  let failed: Error | undefined;
  try {
    return await inTransaction(session as Db, (tx) => work(tx, copy));
  } catch (error) {
    failed = error as Error;
    throw error;
  } finally {
    // A connection whose COPY or transaction failed midway is not handed to anyone else.
    client.release(failed);
  }
}

/**
 * One COPY text-format field: NULL as \N; backslash, tab, newline and carriage return escaped. (Text reaching
 * here holds no U+0000: PostgreSQL text cannot store it, and the import rejects such cells first.)
 */
export function copyField(value: string | null): string {
  if (value === null) return '\\N';
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]!) : value;
}

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** Rows joined into ~64 KiB pieces: one CopyData message each instead of one per row. */
function* chunked(rows: Iterable<string>): Generator<string> {
  let piece = '';
  for (const row of rows) {
    piece += row;
    if (piece.length >= 64 * 1024) {
      yield piece;
      piece = '';
    }
  }
  if (piece) yield piece;
}

/** One COPY text-format row (fields already escaped with copyField), newline-terminated. */
export const copyRow = (fields: string[]) => `${fields.join('\t')}\n`;
