import type { ColumnType } from 'kysely';

/** Set by the database on insert, never updated. */
export type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
/** A timestamptz column written by the application. */
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** A timestamptz column with a database default. */
export type TimestampDefault = ColumnType<Date, Date | string | undefined, Date | string>;
/** jsonb: written as JSON text or a value, read as a value. */
export type Json<T> = ColumnType<T, T | string, T | string>;
