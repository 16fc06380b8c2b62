// Contacts section (the contacts paths of openapi.yaml): contacts, consent history, RCS checks, tags, bulk tagging,
// imports, segments. Each handler takes the typed input, makes one service call (src/domain/contacts/) with the
// tenant, and maps the result (mappers.ts).
import * as bulkTag from '../domain/contacts/bulk-tag.ts';
import * as contacts from '../domain/contacts/contacts.ts';
import * as imports from '../domain/contacts/import.ts';
import { toBulkTagJob, toContact, toContactConsentEntry, toImportJob, toRcsCheck, toTag } from '../domain/contacts/mappers.ts';
import { checkContactRcs } from '../domain/contacts/rcs-check.ts';
import * as segments from '../domain/contacts/segments.ts';
import * as tags from '../domain/contacts/tags.ts';
import { defineHandlers } from '../http/handler-types.ts';
import { pageOf, paginated, wholeOrPaged } from '../http/pagination.ts';

export const contactHandlers = defineHandlers({
  async listContacts({ query }, { tenant }) {
    const page = pageOf(query);
    const { rows, total } = await contacts.listContacts(tenant, query, page);
    return { status: 200, body: paginated(rows.map(toContact), total, page) };
  },

  async createContact({ body }, { tenant }) {
    return { status: 201, body: toContact(await contacts.createContact(tenant, body)) };
  },

  async listContactAttributeKeys({ query }, { tenant }) {
    const { keys, truncated } = await contacts.listAttributeKeys(tenant);
    return { status: 200, body: { ...wholeOrPaged(keys, query), truncated } };
  },

  async getContact({ path }, { tenant }) {
    return { status: 200, body: toContact(await contacts.getContact(tenant, path.id)) };
  },

  async replaceContact({ path, body }, { tenant }) {
    return { status: 200, body: toContact(await contacts.replaceContact(tenant, path.id, body)) };
  },

  async deleteContact({ path }, { tenant }) {
    await contacts.deleteContact(tenant, path.id);
    return { status: 200, body: { data: { id: path.id, deleted: true as const } } };
  },

  async listContactConsent({ path, query }, { tenant }) {
    const page = pageOf(query);
    const { contactId, rows, total } = await contacts.listConsent(tenant, path.id, page);
    return {
      status: 200,
      body: paginated(
        rows.map((r) => toContactConsentEntry(r, contactId)),
        total,
        page,
      ),
    };
  },

  async checkContactRcs({ path }, { tenant, services }) {
    return { status: 200, body: { data: toRcsCheck(await checkContactRcs(tenant, services, path.id)) } };
  },

  async tagContacts({ body }, { tenant, services }) {
    const outcome = await bulkTag.tagContacts(tenant, services, body);
    if (outcome.kind === 'done') return { status: 200, body: { data: outcome.counts } };
    return { status: 202, body: toBulkTagJob(outcome.job), headers: { Location: `/v1/contacts/bulk/tag/${outcome.job.id}` } };
  },

  async untagContacts({ body }, { tenant }) {
    return { status: 200, body: { data: { untagged: await bulkTag.untagContacts(tenant, body) } } };
  },

  async getContactBulkTagJob({ path }, { tenant }) {
    return { status: 200, body: toBulkTagJob(await bulkTag.getBulkTagJob(tenant, path.jobId)) };
  },

  async importContacts({ body, files }, { tenant, services }) {
    const job = await imports.startImport(tenant, services, body, files);
    return { status: 202, body: toImportJob(job), headers: { Location: `/v1/contacts/import/${job.id}` } };
  },

  async getContactImportJob({ path }, { tenant }) {
    return { status: 200, body: toImportJob(await imports.getImportJob(tenant, path.jobId)) };
  },

  async listTags({ query }, { tenant }) {
    return { status: 200, body: wholeOrPaged((await tags.listTags(tenant)).map(toTag), query) };
  },

  async createTag({ body }, { tenant }) {
    return { status: 201, body: { data: toTag(await tags.createTag(tenant, body.name)) } };
  },

  async deleteTag({ path }, { tenant }) {
    const { contactsUntagged } = await tags.deleteTag(tenant, path.id);
    return { status: 200, body: { data: { id: path.id, deleted: true as const, contactsUntagged } } };
  },

  async previewSegment({ body }, { tenant }) {
    const { count, sample } = await segments.previewSegment(tenant, body);
    return { status: 200, body: { data: { count, sample: sample.map(toContact) } } };
  },

  async resolveSegment({ body, query }, { tenant }) {
    const page = pageOf({ page: query.page, limit: query.limit ?? segments.RESOLVE_DEFAULT_LIMIT });
    const { segmentId, expiresAt, page: ids } = await segments.resolveSegment(tenant, body, page);
    const { data, pagination } = paginated(ids.rows, ids.total, page);
    return { status: 200, body: { data: { segmentId, segmentExpiresAt: expiresAt.toISOString(), contactIds: data }, pagination } };
  },
});
