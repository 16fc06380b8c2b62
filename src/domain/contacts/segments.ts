// Segments: a SegmentQueryRequest over the organization's contacts, previewed (count and the newest matching
// contacts) or resolved to a page of contact ids. The query is compiled to one SQL predicate
// (src/db/queries/contacts/segments.ts).
import type { components } from '../../../generated/api.d.ts';
import type { Page, PageRequest } from '../../db/paging.ts';
import * as q from '../../db/queries/contacts/segments.ts';
import type { Tenant } from '../tenant.ts';
import { contactViews, type ContactView } from './contacts.ts';

type SegmentQuery = components['schemas']['SegmentQueryRequest'];

/** Contacts shown by a preview, newest first. */
export const SEGMENT_SAMPLE_SIZE = 10;
/** Ids per page of a resolved segment when the request does not say (documented on POST /v1/segments/resolve). */
export const RESOLVE_DEFAULT_LIMIT = 1000;

export async function previewSegment(tenant: Tenant, segment: SegmentQuery): Promise<{ count: number; sample: ContactView[] }> {
  const { db, organizationId: orgId } = tenant;
  const predicate = q.segmentPredicate(segment, orgId);
  const [count, sample] = await Promise.all([q.countSegment(db, orgId, predicate), q.sampleSegment(db, orgId, predicate, SEGMENT_SAMPLE_SIZE)]);
  return { count, sample: await contactViews(db, orgId, sample) };
}

/** A page of the matching contact ids in creation order, with the total. */
export function resolveSegment(tenant: Tenant, segment: SegmentQuery, page: PageRequest): Promise<Page<string>> {
  return q.segmentIdPage(tenant.db, tenant.organizationId, q.segmentPredicate(segment, tenant.organizationId), page);
}
