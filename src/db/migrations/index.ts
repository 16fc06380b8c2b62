// Explicit migration registry: order is this list, never a directory scan.
// Kysely's Migrator holds a PostgreSQL advisory lock while it runs, so concurrent starts are safe.
import type { Migration } from 'kysely/migration';
import * as m0001 from './0001_organizations_and_api_keys.ts';

export const migrations: Record<string, Migration> = {
  '0001_organizations_and_api_keys': m0001,
};
