// Dictionaries section (the dictionaries paths of openapi.yaml): intents, variable definitions and their folders, with the
// usage and rewrite (rename everywhere) operations. See README "Adding an operation".
import * as categories from '../domain/dictionaries/categories.ts';
import * as intents from '../domain/dictionaries/intents.ts';
import {
  toDictionaryCategory,
  toIntent,
  toIntentUsage,
  toRewriteResult,
  toVariableDefinition,
  toVariableUsage,
} from '../domain/dictionaries/mappers.ts';
import * as variables from '../domain/dictionaries/variables.ts';
import { defineHandlers } from '../http/handler-types.ts';
import { wholeOrPaged } from '../http/pagination.ts';

export const dictionaryHandlers = defineHandlers({
  // Intents
  async listIntents({ query }, { tenant }) {
    return { status: 200, body: wholeOrPaged((await intents.listIntents(tenant)).map(toIntent), query) };
  },

  async createIntent({ body }, { tenant }) {
    return { status: 201, body: { data: toIntent(await intents.createIntent(tenant, body)) } };
  },

  async updateIntent({ path, body }, { tenant }) {
    return { status: 200, body: { data: toIntent(await intents.updateIntent(tenant, path.id, body)) } };
  },

  async deleteIntent({ path }, { tenant }) {
    return { status: 200, body: { success: true, id: await intents.deleteIntent(tenant, path.id) } };
  },

  async getIntentUsage({ path }, { tenant }) {
    const { intent, usage } = await intents.intentUsage(tenant, path.id);
    return { status: 200, body: { data: toIntentUsage(intent, usage) } };
  },

  async rewriteIntent({ path, body }, { tenant }) {
    return { status: 200, body: toRewriteResult(await intents.rewriteIntent(tenant, path.id, body)) };
  },

  // Variable definitions
  async listVariableDefinitions({ query }, { tenant }) {
    return { status: 200, body: wholeOrPaged((await variables.listVariables(tenant)).map(toVariableDefinition), query) };
  },

  async createVariableDefinition({ body }, { tenant }) {
    return { status: 201, body: { data: toVariableDefinition(await variables.createVariable(tenant, body)) } };
  },

  async updateVariableDefinition({ path, body }, { tenant }) {
    return { status: 200, body: { data: toVariableDefinition(await variables.updateVariable(tenant, path.id, body)) } };
  },

  async deleteVariableDefinition({ path }, { tenant }) {
    return { status: 200, body: { success: true, id: await variables.deleteVariable(tenant, path.id) } };
  },

  async getVariableDefinitionUsage({ path }, { tenant }) {
    const { variable, usage } = await variables.variableUsage(tenant, path.id);
    return { status: 200, body: { data: toVariableUsage(variable, usage) } };
  },

  async rewriteVariableDefinition({ path, body }, { tenant }) {
    return { status: 200, body: toRewriteResult(await variables.rewriteVariable(tenant, path.id, body)) };
  },

  // Folders
  async listDictionaryCategories({ query }, { tenant }) {
    return { status: 200, body: wholeOrPaged((await categories.listCategories(tenant)).map(toDictionaryCategory), query) };
  },

  async createDictionaryCategory({ body }, { tenant }) {
    return { status: 201, body: { data: toDictionaryCategory(await categories.createCategory(tenant, body)) } };
  },

  async updateDictionaryCategory({ path, body }, { tenant }) {
    return { status: 200, body: { data: toDictionaryCategory(await categories.updateCategory(tenant, path.id, body)) } };
  },

  async deleteDictionaryCategory({ path }, { tenant }) {
    return { status: 200, body: { success: true, id: await categories.deleteCategory(tenant, path.id) } };
  },

  async reorderDictionaryCategories({ body }, { tenant }) {
    return { status: 200, body: wholeOrPaged((await categories.reorderCategories(tenant, body)).map(toDictionaryCategory), undefined) };
  },
});
