// Compliance section (the compliance paths of openapi.yaml): DNC, consent overrides, TCPA settings, content rules,
// keyword rules, reports. Each handler takes the typed input, makes one service call (src/domain/compliance/)
// with the tenant, and maps the result (mappers.ts). No SQL, no rules, no transactions here.
import * as overrides from '../domain/compliance/consent-overrides.ts';
import * as tcpa from '../domain/compliance/contact-tcpa.ts';
import * as contentRules from '../domain/compliance/content-rules.ts';
import * as dnc from '../domain/compliance/dnc.ts';
import * as keywordRules from '../domain/compliance/keyword-rules.ts';
import {
  reportCsv,
  reportFilename,
  toComplianceOverride,
  toContactTcpa,
  toContentRule,
  toDncBatchResult,
  toDncEntry,
  toKeywordRule,
  toReportRows,
} from '../domain/compliance/mappers.ts';
import * as reports from '../domain/compliance/reports.ts';
import { defineHandlers } from '../http/handler-types.ts';
import { pageOf, paginated, wholeOrPaged } from '../http/pagination.ts';

export const complianceHandlers = defineHandlers({
  // DNC
  async listDncEntries({ query }, { tenant }) {
    const page = pageOf(query);
    const { rows, total } = await dnc.listDncEntries(tenant, page, query.search);
    return { status: 200, body: paginated(rows.map(toDncEntry), total, page) };
  },

  async createDncEntry({ body }, { tenant, services }) {
    const { row, created } = await dnc.createDncEntry(tenant, services, body);
    return { status: 200, body: { data: toDncEntry(row), created } };
  },

  async createDncEntriesBatch({ body }, { tenant, services }) {
    return { status: 200, body: { data: toDncBatchResult(await dnc.createDncEntriesBatch(tenant, services, body)) } };
  },

  async deleteDncEntry({ path }, { tenant }) {
    return { status: 200, body: { success: true, id: await dnc.deleteDncEntry(tenant, path.id) } };
  },

  // Reports
  async exportComplianceReport({ path, query }, { tenant }) {
    const format = query.format ?? 'json';
    const report = await reports.exportComplianceReport(tenant, path.type, query);
    const rows = toReportRows(report);
    const headers = { 'Content-Disposition': `attachment; filename="${reportFilename(report, format)}"` };
    if (format === 'csv') return { status: 200, body: reportCsv(report.type, rows), contentType: 'text/csv; charset=utf-8', headers };
    return { status: 200, body: rows, headers };
  },

  // Consent override and TCPA settings
  async createComplianceOverride({ body }, { tenant }) {
    return { status: 200, body: { data: toComplianceOverride(await overrides.createComplianceOverride(tenant, body)) } };
  },

  async updateContactTcpa({ path, body }, { tenant }) {
    return { status: 200, body: { data: toContactTcpa(await tcpa.updateContactTcpa(tenant, path.id, body)) } };
  },

  // Content rules
  async listContentRules({ query }, { tenant }) {
    const page = pageOf(query);
    const filter = { search: query.search, action: query.action, patternType: query.patternType };
    const { rows, total } = await contentRules.listContentRules(tenant, filter, page);
    return { status: 200, body: paginated(rows.map(toContentRule), total, page) };
  },

  async createContentRule({ body }, { tenant }) {
    return { status: 201, body: { data: toContentRule(await contentRules.createContentRule(tenant, body)) } };
  },

  async updateContentRule({ path, body }, { tenant }) {
    return { status: 200, body: { data: toContentRule(await contentRules.updateContentRule(tenant, path.id, body)) } };
  },

  async deleteContentRule({ path }, { tenant }) {
    return { status: 200, body: { success: true, id: await contentRules.deleteContentRule(tenant, path.id) } };
  },

  // Keyword rules
  async listKeywordRules({ query }, { tenant }) {
    return { status: 200, body: wholeOrPaged((await keywordRules.listKeywordRules(tenant)).map(toKeywordRule), query) };
  },

  async createKeywordRule({ body }, { tenant }) {
    return { status: 201, body: { data: toKeywordRule(await keywordRules.createKeywordRule(tenant, body)) } };
  },

  async updateKeywordRule({ path, body }, { tenant }) {
    return { status: 200, body: { data: toKeywordRule(await keywordRules.updateKeywordRule(tenant, path.id, body)) } };
  },

  async deleteKeywordRule({ path }, { tenant }) {
    return { status: 200, body: { success: true, id: await keywordRules.deleteKeywordRule(tenant, path.id) } };
  },
});
