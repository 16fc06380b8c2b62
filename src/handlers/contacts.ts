// Contacts section: contacts, consent history, RCS checks, tags, bulk tagging, imports, segments.
import { inTransaction } from '../db/database.ts';
import * as jobs from '../db/queries/contact-jobs.ts';
import * as q from '../db/queries/contacts.ts';
import { countSegment, sampleSegment, segmentIdPage } from '../db/queries/segments.ts';
import { deleteTag, listTags, untagContactsSet } from '../db/queries/tags.ts';
import { tagContacts } from '../domain/contacts/bulk-tag.ts';
import { toContacts, toContactView } from '../domain/contacts/contact-view.ts';
import { toConsentAuditLog } from '../domain/compliance/consent-audit-log.ts';
import { contactConsentHistory } from '../db/queries/consent.ts';
import { createContact, listContacts, replaceContact, requireTags } from '../domain/contacts/contacts.ts';
import { startContactImport, toImportJob } from '../domain/contacts/import-request.ts';
import { checkContactRcs } from '../domain/contacts/rcs-check.ts';
import { segmentPredicate } from '../domain/contacts/segment-compiler.ts';
import { createTag, toTag } from '../domain/contacts/tags.ts';
import { notFound } from '../domain/errors.ts';
import { defineHandlers, requirePrincipal } from '../http/handler-types.ts';
import { pageOf, paginated } from '../http/pagination.ts';

/** GET /v1/contacts/attribute-keys answers at most this many keys. */
export const ATTRIBUTE_KEYS_CAP = 500;
const SEGMENT_SAMPLE = 10;

function toBulkTagJob(row: NonNullable<Awaited<ReturnType<typeof jobs.getBulkTagJob>>>) {
  return {
    jobId: row.id,
    status: row.status,
    tagIds: row.tag_ids,
    total: row.total,
    processed: row.processed,
    tagged: row.tagged,
    alreadyTagged: row.already_tagged,
    notFound: row.not_found,
    failed: row.failed,
    error: row.error,
    createdAt: row.created_at.toISOString(),
    completedAt: row.completed_at?.toISOString() ?? null,
  };
}

export const contactHandlers = defineHandlers({
  async listContacts({ query }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const page = pageOf(query);
    const filters = {
      search: query.search,
      tag: query.tag,
      rcsCap: query.rcsCap,
      sortBy: query.sortBy ?? 'createdAt',
      sortOrder: query.sortOrder ?? 'desc',
    };
    const { data, total } = await listContacts(scope.app.db, organizationId, filters, page);
    return { status: 200, body: paginated(data, total, page) };
  },

  async createContact({ body }, scope) {
    const { organizationId, apiKeyId } = requirePrincipal(scope);
    return { status: 201, body: await createContact(scope.app.db, organizationId, apiKeyId, body) };
  },

  async listContactAttributeKeys(_input, scope) {
    const { organizationId } = requirePrincipal(scope);
    const { keys, truncated } = await q.attributeKeys(scope.app.db, organizationId, ATTRIBUTE_KEYS_CAP);
    return { status: 200, body: { data: keys, truncated } };
  },

  async getContact({ path }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const row = await q.getContact(scope.app.db, organizationId, path.id);
    if (!row) throw notFound('Contact');
    return { status: 200, body: await toContactView(scope.app.db, organizationId, row) };
  },

  async replaceContact({ path, body }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const contact = await replaceContact(scope.app.db, organizationId, path.id, body);
    if (!contact) throw notFound('Contact');
    return { status: 200, body: contact };
  },

  async deleteContact({ path }, scope) {
    const { organizationId } = requirePrincipal(scope);
    if (!(await q.deleteContact(scope.app.db, organizationId, path.id))) throw notFound('Contact');
    return { status: 200, body: { data: { id: path.id, deleted: true as const } } };
  },

  async listContactConsent({ path, query }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const contact = await q.getContact(scope.app.db, organizationId, path.id);
    if (!contact) throw notFound('Contact');
    const page = pageOf(query);
    const { rows, total } = await contactConsentHistory(scope.app.db, organizationId, contact, page);
    return { status: 200, body: paginated(rows.map((r) => toConsentAuditLog(r, contact.id)), total, page) };
  },

  async checkContactRcs({ path }, scope) {
    const { organizationId, apiKeyId } = requirePrincipal(scope);
    const check = await checkContactRcs(scope.app.db, scope.app.provider, organizationId, path.id, apiKeyId);
    if (!check) throw notFound('Contact');
    return { status: 200, body: { data: check } };
  },

  async tagContacts({ body }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const outcome = await tagContacts(scope.app, organizationId, body);
    if (outcome.kind === 'done') return { status: 200, body: { data: outcome.counts } };
    const job = outcome.job;
    return { status: 202, body: toBulkTagJob(job), headers: { Location: `/v1/contacts/bulk/tag/${job.id}` } };
  },

  async untagContacts({ body }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const contactIds = [...new Set(body.contactIds.map((id) => id.toLowerCase()))];
    const untagged = await inTransaction(scope.app.db, async (tx) => {
      const tagIds = await requireTags(tx, organizationId, body.tagIds, 'body.tagIds');
      return untagContactsSet(tx, organizationId, contactIds, tagIds);
    });
    return { status: 200, body: { data: { untagged } } };
  },

  async getContactBulkTagJob({ path }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const job = await jobs.getBulkTagJob(scope.app.db, organizationId, path.jobId);
    if (!job) throw notFound('Bulk tag job');
    return { status: 200, body: toBulkTagJob(job) };
  },

  async importContacts({ body, files }, scope) {
    const { organizationId, apiKeyId } = requirePrincipal(scope);
    const job = await startContactImport(scope.app, organizationId, apiKeyId, body, files);
    return { status: 202, body: toImportJob(job), headers: { Location: `/v1/contacts/import/${job.id}` } };
  },

  async getContactImportJob({ path }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const job = await jobs.getImportJob(scope.app.db, organizationId, path.jobId);
    if (!job) throw notFound('Import job');
    return { status: 200, body: toImportJob(job) };
  },

  async listTags(_input, scope) {
    const { organizationId } = requirePrincipal(scope);
    return { status: 200, body: { data: (await listTags(scope.app.db, organizationId)).map(toTag) } };
  },

  async createTag({ body }, scope) {
    const { organizationId } = requirePrincipal(scope);
    return { status: 201, body: { data: toTag(await createTag(scope.app.db, organizationId, body.name)) } };
  },

  async deleteTag({ path }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const deleted = await inTransaction(scope.app.db, (tx) => deleteTag(tx, organizationId, path.id));
    if (!deleted) throw notFound('Tag');
    return { status: 200, body: { data: { id: path.id, deleted: true as const, contactsUntagged: deleted.contactsUntagged } } };
  },

  async previewSegment({ body }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const db = scope.app.db;
    const predicate = segmentPredicate(body, organizationId);
    const [count, sample] = await Promise.all([countSegment(db, organizationId, predicate), sampleSegment(db, organizationId, predicate, SEGMENT_SAMPLE)]);
    return { status: 200, body: { data: { count, sample: await toContacts(db, organizationId, sample) } } };
  },

  async resolveSegment({ body, query }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const db = scope.app.db;
    const page = pageOf({ page: query.page, limit: query.limit ?? 1000 });
    const predicate = segmentPredicate(body, organizationId);
    const [total, ids] = await Promise.all([countSegment(db, organizationId, predicate), segmentIdPage(db, organizationId, predicate, page)]);
    const { data, pagination } = paginated(ids, total, page);
    return { status: 200, body: { data: { contactIds: data }, pagination } };
  },
});
