// PostgreSQL error classification, in one place: callers turn these into the contract's errors (a unique
// violation into a 409, a vanished parent into a 404, a cancelled statement into a 504). SQLSTATE codes from
// PostgreSQL's errcodes (https://www.postgresql.org/docs/current/errcodes-appendix.html).

type PgError = { code?: unknown; constraint?: unknown } | null | undefined;

const sqlState = (error: unknown): unknown => (error as PgError)?.code;

/** unique_violation (23505), optionally on one named constraint (a concurrent writer won the key). */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  return sqlState(error) === '23505' && (constraint === undefined || (error as PgError)?.constraint === constraint);
}

/** foreign_key_violation (23503), optionally on one named constraint (the row it refers to is gone). */
export function isForeignKeyViolation(error: unknown, constraint?: string): boolean {
  return sqlState(error) === '23503' && (constraint === undefined || (error as PgError)?.constraint === constraint);
}

/** query_canceled (57014): a statement_timeout, or a cancellation (ours when the client left, or an operator's). */
export function isQueryCanceled(error: unknown): boolean {
  return sqlState(error) === '57014';
}
