// Compliance section: DNC, consent overrides, TCPA settings, content rules, keyword rules, reports.
import type { components } from '../../generated/api.d.ts';
import * as consentQ from '../db/queries/compliance-consent.ts';
import * as contentQ from '../db/queries/compliance-content-rules.ts';
import * as dncQ from '../db/queries/compliance-dnc.ts';
import * as keywordQ from '../db/queries/compliance-keyword-rules.ts';
import { checkContentPattern, type ContentRulePatternType } from '../domain/compliance/content-rules.ts';
import {
  isGlobalRuleId,
  listedOrgRule,
  listKeywordRules,
  resolveKeywordRule,
  type ListedKeywordRule,
} from '../domain/compliance/keyword-rules.ts';
import { minutesOf } from '../domain/compliance/quiet-hours.ts';
import { isReportType, reportCsv, reportFilename, reportRange, reportRows } from '../domain/compliance/reports.ts';
import { DEFAULT_QUIET_HOURS_END, DEFAULT_QUIET_HOURS_START, isKnownTimeZone, resolveTcpa } from '../domain/compliance/tcpa.ts';
import { parsePhone } from '../domain/phone.ts';
import { ApiError, badRequest, conflict, invalidField, notFound, unprocessable, type FieldError } from '../domain/errors.ts';
import { defineHandlers, requirePrincipal } from '../http/handler-types.ts';
import { pageOf, paginated } from '../http/pagination.ts';

type Schemas = components['schemas'];

const E164 = /^\+[1-9][0-9]{6,14}$/;
const ALL_MESSAGE_TYPES: Schemas['MessageType'][] = ['MARKETING', 'TRANSACTIONAL', 'SERVICE'];

function toDncEntry(r: dncQ.DncEntryRow): Schemas['DncEntry'] {
  return {
    id: r.id,
    phone: r.phone,
    reason: r.reason,
    source: r.source as Schemas['DncEntry']['source'],
    actor: r.actor,
    createdAt: r.created_at.toISOString(),
  };
}

function toContentRule(r: contentQ.ContentRuleRow): Schemas['ContentRule'] {
  return {
    id: r.id,
    name: r.name,
    pattern: r.pattern,
    patternType: r.pattern_type as Schemas['ContentRule']['patternType'],
    action: r.action as Schemas['ContentRule']['action'],
    caseSensitive: r.case_sensitive,
    messageTypes: r.message_types as Schemas['ContentRule']['messageTypes'],
    enabled: r.enabled,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

function toKeywordRule(r: ListedKeywordRule): Schemas['KeywordRule'] {
  return { ...r, createdAt: r.createdAt?.toISOString() ?? null, updatedAt: r.updatedAt?.toISOString() ?? null };
}

/** Refuses an unsafe or invalid pattern with 400 UNSAFE_REGEX naming body.pattern. */
function assertSafePattern(pattern: string, patternType: ContentRulePatternType): void {
  const check = checkContentPattern(pattern, patternType);
  if (!check.ok) throw invalidField('body.pattern', check.reason, 'UNSAFE_REGEX');
}

function assertMutableKeywordRule(id: string): void {
  if (isGlobalRuleId(id)) {
    throw new ApiError(403, 'GLOBAL_RULE_IMMUTABLE', 'Global keyword rules cannot be edited or deleted; create an organization rule with the same keyword to override it.');
  }
}

/** Quiet hours may only widen the TCPA period: 08:00 ≤ end < start ≤ 21:00. */
function quietHoursProblems(start: string, end: string, given: { start: boolean; end: boolean }): FieldError[] {
  const problems: FieldError[] = [];
  const s = minutesOf(start);
  const e = minutesOf(end);
  if (e < minutesOf(DEFAULT_QUIET_HOURS_END)) problems.push({ field: 'body.quietHoursEnd', message: `must be ${DEFAULT_QUIET_HOURS_END} or later (quiet hours may only widen the TCPA period)` });
  if (s > minutesOf(DEFAULT_QUIET_HOURS_START)) problems.push({ field: 'body.quietHoursStart', message: `must be ${DEFAULT_QUIET_HOURS_START} or earlier (quiet hours may only widen the TCPA period)` });
  if (problems.length === 0 && e >= s) {
    const field = given.end || !given.start ? 'body.quietHoursEnd' : 'body.quietHoursStart';
    problems.push({ field, message: `quietHoursEnd (${end}) must be before quietHoursStart (${start})` });
  }
  return problems;
}

export const complianceHandlers = defineHandlers({
  // ---------------------------------------------------------------------------------------------------------
  // DNC
  // ---------------------------------------------------------------------------------------------------------
  async listDncEntries({ query }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const page = pageOf(query);
    const rows = await dncQ.listDncEntries(scope.app.db, organizationId, page, query.search);
    const total = rows[0] ? Number(rows[0].total_count) : page.offset > 0 ? await dncQ.countDncEntries(scope.app.db, organizationId, query.search) : 0;
    return { status: 200, body: paginated(rows.map(toDncEntry), total, page) };
  },

  async createDncEntry({ body }, scope) {
    const principal = requirePrincipal(scope);
    const parsed = parsePhone(body.phone);
    if (!parsed) throw invalidField('body.phone', 'is not a valid phone number for its country', 'INVALID_PHONE');
    const { row, created } = await dncQ.addDncEntry(scope.app.db, principal.organizationId, {
      phone: parsed.e164,
      reason: body.reason ?? null,
      actor: principal.apiKeyId,
    });
    return { status: 200, body: { data: toDncEntry(row), created } };
  },

  async createDncEntriesBatch({ body }, scope) {
    const principal = requirePrincipal(scope);
    type Item = { phone: string; e164: string | null; status: Schemas['DncBatchItemResult']['status'] };
    const seen = new Set<string>();
    const items: Item[] = body.phones.map((phone) => {
      const e164 = E164.test(phone) ? (parsePhone(phone)?.e164 ?? null) : null;
      if (!e164) return { phone, e164: null, status: 'invalid' };
      if (seen.has(e164)) return { phone, e164: null, status: 'duplicate_in_request' };
      seen.add(e164);
      return { phone, e164, status: 'added' };
    });
    const { ids, added } = await dncQ.addDncEntries(scope.app.db, principal.organizationId, [...seen], {
      reason: body.reason ?? null,
      actor: principal.apiKeyId,
    });
    const results: Schemas['DncBatchItemResult'][] = items.map((it) =>
      it.e164 === null
        ? { phone: it.phone, status: it.status, id: null }
        : { phone: it.phone, status: added.has(it.e164) ? 'added' : 'already_listed', id: ids.get(it.e164) ?? null },
    );
    const count = (s: Schemas['DncBatchItemResult']['status']) => results.filter((r) => r.status === s).length;
    return {
      status: 200,
      body: {
        data: {
          results,
          added: count('added'),
          alreadyListed: count('already_listed'),
          invalid: count('invalid'),
          duplicateInRequest: count('duplicate_in_request'),
        },
      },
    };
  },

  async deleteDncEntry({ path }, scope) {
    const { organizationId } = requirePrincipal(scope);
    if (!(await dncQ.deleteDncEntry(scope.app.db, organizationId, path.id))) throw notFound('DNC entry');
    return { status: 200, body: { success: true, id: path.id } };
  },

  // ---------------------------------------------------------------------------------------------------------
  // Reports
  // ---------------------------------------------------------------------------------------------------------
  async exportComplianceReport({ path, query }, scope) {
    const { organizationId } = requirePrincipal(scope);
    if (!isReportType(path.type)) throw notFound(`Report type "${path.type}"`);
    const range = reportRange(query, new Date());
    if (!range.ok) throw invalidField(range.field, range.message);
    const format = query.format ?? 'json';
    const rows = await reportRows(scope.app.db, organizationId, path.type, range.range);
    const headers = { 'Content-Disposition': `attachment; filename="${reportFilename(path.type, range.range, format)}"` };
    if (format === 'csv') return { status: 200, body: reportCsv(path.type, rows), contentType: 'text/csv; charset=utf-8', headers };
    return { status: 200, body: rows, headers };
  },

  // ---------------------------------------------------------------------------------------------------------
  // Consent override and TCPA settings
  // ---------------------------------------------------------------------------------------------------------
  async createComplianceOverride({ body }, scope) {
    const principal = requirePrincipal(scope);
    const type = body.type ?? 'CONSENT_GRANT';
    const result = await consentQ.createOverride(scope.app.db, principal.organizationId, {
      contactId: body.contactId,
      type,
      reason: body.reason,
      actor: principal.apiKeyId,
    });
    if ('error' in result) {
      if (result.error === 'dnc_listed') throw unprocessable('DNC_LISTED', 'The contact’s phone is on the Do-Not-Contact list; an override cannot lift it.');
      throw new ApiError(404, 'NOT_FOUND', 'Contact not found.', { details: [{ field: 'body.contactId', message: 'is not a contact of this organization' }] });
    }
    const o = result.override;
    return {
      status: 200,
      body: {
        data: {
          id: o.id,
          contactId: o.contact_id,
          type: 'CONSENT_GRANT',
          reason: o.reason,
          actor: o.actor,
          createdAt: o.created_at.toISOString(),
          expiresAt: o.expires_at.toISOString(),
          auditLogId: o.audit_log_id,
        },
      },
    };
  },

  async updateContactTcpa({ path, body }, scope) {
    const principal = requirePrincipal(scope);
    if (body.timeZone !== undefined && body.timeZone !== null && !isKnownTimeZone(body.timeZone)) {
      throw invalidField('body.timeZone', `is not an IANA time zone known to this server: ${body.timeZone}`);
    }
    // Stored as the runtime's canonical spelling (`america/chicago` → `America/Chicago`, `US/Eastern` → `America/New_York`).
    const timeZone = body.timeZone ? new Intl.DateTimeFormat('en-US', { timeZone: body.timeZone }).resolvedOptions().timeZone : body.timeZone;
    const row = await consentQ.updateContactTcpa(scope.app.db, principal.organizationId, path.id, principal.apiKeyId, (current) => {
      const start = body.quietHoursStart ?? current.quiet_hours_start ?? DEFAULT_QUIET_HOURS_START;
      const end = body.quietHoursEnd ?? current.quiet_hours_end ?? DEFAULT_QUIET_HOURS_END;
      const problems = quietHoursProblems(start, end, { start: body.quietHoursStart !== undefined, end: body.quietHoursEnd !== undefined });
      if (problems.length) throw badRequest('Quiet hours may only widen the TCPA period: 08:00 ≤ quietHoursEnd < quietHoursStart ≤ 21:00.', problems);
      return {
        time_zone: timeZone === undefined ? current.time_zone : timeZone,
        quiet_hours_start: body.quietHoursStart ?? current.quiet_hours_start,
        quiet_hours_end: body.quietHoursEnd ?? current.quiet_hours_end,
        consent_type: body.consentType ?? current.consent_type,
      };
    });
    if (!row) throw notFound('Contact');
    const tcpa = await resolveTcpa(row);
    return {
      status: 200,
      body: {
        data: {
          contactId: row.id,
          timeZone: tcpa.timeZone,
          timeZoneSource: tcpa.timeZoneSource,
          quietHoursStart: tcpa.quietHoursStart,
          quietHoursEnd: tcpa.quietHoursEnd,
          consentType: tcpa.consentType,
          updatedAt: row.updated_at.toISOString(),
        },
      },
    };
  },

  // ---------------------------------------------------------------------------------------------------------
  // Content rules
  // ---------------------------------------------------------------------------------------------------------
  async listContentRules({ query }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const page = pageOf(query);
    const filter = { search: query.search, action: query.action, patternType: query.patternType };
    const rows = await contentQ.listContentRules(scope.app.db, organizationId, filter, page);
    const total = rows[0] ? Number(rows[0].total_count) : page.offset > 0 ? await contentQ.countContentRules(scope.app.db, organizationId, filter) : 0;
    return { status: 200, body: paginated(rows.map(toContentRule), total, page) };
  },

  async createContentRule({ body }, scope) {
    const { organizationId } = requirePrincipal(scope);
    assertSafePattern(body.pattern, body.patternType);
    const row = await contentQ.insertContentRule(scope.app.db, organizationId, {
      name: body.name,
      pattern: body.pattern,
      pattern_type: body.patternType,
      action: body.action,
      case_sensitive: body.caseSensitive ?? false,
      message_types: body.messageTypes ?? ALL_MESSAGE_TYPES,
      enabled: body.enabled ?? true,
    });
    if (!row) throw unprocessable('UNPROCESSABLE', `An organization can have at most ${contentQ.MAX_CONTENT_RULES} content rules.`);
    return { status: 201, body: { data: toContentRule(row) } };
  },

  async updateContentRule({ path, body }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const row = await contentQ.updateContentRule(scope.app.db, organizationId, path.id, (current) => {
      const pattern = body.pattern ?? current.pattern;
      const patternType = body.patternType ?? (current.pattern_type as ContentRulePatternType);
      if (pattern !== current.pattern || patternType !== current.pattern_type) assertSafePattern(pattern, patternType);
      return {
        ...(body.name !== undefined && { name: body.name }),
        ...(body.pattern !== undefined && { pattern: body.pattern }),
        ...(body.patternType !== undefined && { pattern_type: body.patternType }),
        ...(body.action !== undefined && { action: body.action }),
        ...(body.caseSensitive !== undefined && { case_sensitive: body.caseSensitive }),
        ...(body.messageTypes !== undefined && { message_types: body.messageTypes }),
        ...(body.enabled !== undefined && { enabled: body.enabled }),
      };
    });
    if (!row) throw notFound('Content rule');
    return { status: 200, body: { data: toContentRule(row) } };
  },

  async deleteContentRule({ path }, scope) {
    const { organizationId } = requirePrincipal(scope);
    if (!(await contentQ.deleteContentRule(scope.app.db, organizationId, path.id))) throw notFound('Content rule');
    return { status: 200, body: { success: true, id: path.id } };
  },

  // ---------------------------------------------------------------------------------------------------------
  // Keyword rules
  // ---------------------------------------------------------------------------------------------------------
  async listKeywordRules(_input, scope) {
    const { organizationId } = requirePrincipal(scope);
    const own = await keywordQ.listOrgKeywordRules(scope.app.db, organizationId);
    return { status: 200, body: { data: listKeywordRules(own).map(toKeywordRule) } };
  },

  async createKeywordRule({ body }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const keyword = body.keyword.toUpperCase();
    const resolved = resolveKeywordRule(keyword, { action: body.action, replyText: body.replyText });
    if (!resolved.ok) throw invalidField(resolved.field, resolved.message);
    const result = await keywordQ.insertKeywordRule(scope.app.db, organizationId, { keyword, action: resolved.action, replyText: resolved.replyText });
    if ('error' in result) {
      if (result.error === 'duplicate') throw conflict('ALREADY_EXISTS', `The organization already has a keyword rule for ${keyword}.`);
      throw unprocessable('UNPROCESSABLE', `An organization can have at most ${keywordQ.MAX_KEYWORD_RULES} keyword rules.`);
    }
    return { status: 201, body: { data: toKeywordRule(listedOrgRule(result.rule)) } };
  },

  async updateKeywordRule({ path, body }, scope) {
    const { organizationId } = requirePrincipal(scope);
    assertMutableKeywordRule(path.id);
    const rule = await keywordQ.updateKeywordRule(scope.app.db, organizationId, path.id, (current) => {
      const resolved = resolveKeywordRule(current.keyword, { action: body.action ?? current.action, replyText: body.replyText }, current);
      if (!resolved.ok) throw invalidField(resolved.field, resolved.message);
      return resolved;
    });
    if (!rule) throw notFound('Keyword rule');
    return { status: 200, body: { data: toKeywordRule(listedOrgRule(rule)) } };
  },

  async deleteKeywordRule({ path }, scope) {
    const { organizationId } = requirePrincipal(scope);
    assertMutableKeywordRule(path.id);
    if (!(await keywordQ.deleteKeywordRule(scope.app.db, organizationId, path.id))) throw notFound('Keyword rule');
    return { status: 200, body: { success: true, id: path.id } };
  },
});
