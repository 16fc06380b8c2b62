// Dictionaries section: stored rows → the document's shapes.
import type { components } from '../../../generated/api.d.ts';
import type { CategoryRow } from '../../db/queries/dictionaries/categories.ts';
import type { IntentRow } from '../../db/queries/dictionaries/intents.ts';
import type { VariableRow } from '../../db/queries/dictionaries/variables.ts';
import type { RewriteResult, Usage } from './flow-references.ts';

type Schemas = components['schemas'];

export function toIntent(row: IntentRow): Schemas['Intent'] {
  return {
    id: row.id,
    value: row.value,
    label: row.label,
    description: row.description,
    categoryId: row.category_id,
    active: row.active,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toVariableDefinition(row: VariableRow): Schemas['VariableDefinition'] {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    items: row.items,
    categoryId: row.category_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toDictionaryCategory(row: CategoryRow): Schemas['DictionaryCategory'] {
  return {
    id: row.id,
    name: row.name,
    sortOrder: row.sort_order,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toIntentUsage(intent: IntentRow, usage: Usage): Schemas['IntentUsage'] {
  return { intentId: intent.id, value: intent.value, ...usage };
}

export function toVariableUsage(variable: VariableRow, usage: Usage): Schemas['VariableUsage'] {
  return { variableId: variable.id, name: variable.name, ...usage };
}

export function toRewriteResult(r: RewriteResult): Schemas['DictionaryRewriteResult'] {
  return { ...r, rewrittenAt: r.rewrittenAt.toISOString() };
}
