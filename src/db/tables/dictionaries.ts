// Dictionaries section tables: folders, intents (postback tokens) and variable definitions (capture tokens).
// Tokens are stored normalized and unique per organization; ids are stable (bot flows reference entries by id).
import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, TimestampDefault } from './columns.ts';

export interface DictionaryCategoriesTable {
  id: Generated<string>;
  organization_id: string;
  name: string;
  sort_order: number;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

export interface IntentsTable {
  id: Generated<string>;
  organization_id: string;
  /** Normalized (trimmed, lower case); changed only by a rewrite. */
  value: string;
  label: string;
  description: string | null;
  category_id: string | null;
  active: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

export type VariableType = 'text' | 'number' | 'date' | 'boolean' | 'email' | 'phone' | 'list';

export interface VariableDefinitionsTable {
  id: Generated<string>;
  organization_id: string;
  /** Normalized (trimmed, lower case); changed only by a rewrite. */
  name: string;
  type: VariableType;
  /** The allowed values of a `list` variable (a JSON array); null for every other type (a CHECK holds it). */
  items: ColumnType<string[] | null, string | null, string | null>;
  category_id: string | null;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

export interface DictionariesTables {
  dictionary_categories: DictionaryCategoriesTable;
  intents: IntentsTable;
  variable_definitions: VariableDefinitionsTable;
}
