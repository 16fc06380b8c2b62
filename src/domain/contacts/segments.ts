// Segments: a SegmentQueryRequest over the organization's contacts, previewed (count and the newest matching
// contacts) or resolved to a page of contact ids. The query is compiled to one SQL predicate
// (src/db/queries/contacts/segments.ts).
//
// Resolving also saves the query as a segment of the organization and answers its id: the `segmentId` blasts
// take (createBlast, updateBlastAudience). What is saved is the query, never the ids it matched: a blast
// evaluates it again when sending starts, so its audience is who matches then. The same query (canonical JSON:
// `match` defaulted, object keys sorted; array order kept) in the same organization finds the same saved segment
// and id. A segment is kept SEGMENT_TTL_DAYS after its last use (a resolve of the same query, or a blast that
// references it: useSavedSegment) and then purged by a daily job (src/jobs/contacts.ts).
import { createHash } from 'node:crypto';
import type { components } from '../../../generated/api.d.ts';
import type { Db } from '../../db/database.ts';
import type { Page, PageRequest } from '../../db/paging.ts';
import * as q from '../../db/queries/contacts/segments.ts';
import type { Tenant } from '../tenant.ts';
import { contactViews, type ContactView } from './contacts.ts';

type SegmentQuery = components['schemas']['SegmentQueryRequest'];

/** Contacts shown by a preview, newest first. */
const SEGMENT_SAMPLE_SIZE = 10;
/** Ids per page of a resolved segment when the request does not say (documented on POST /v1/segments/resolve). */
export const RESOLVE_DEFAULT_LIMIT = 1000;
/** Days a saved segment is kept after its last use (documented on POST /v1/segments/resolve). */
export const SEGMENT_TTL_DAYS = 90;
const DAY_MS = 24 * 60 * 60 * 1000;

export async function previewSegment(tenant: Tenant, segment: SegmentQuery): Promise<{ count: number; sample: ContactView[] }> {
  const { db, organizationId: orgId } = tenant;
  const predicate = q.segmentPredicate(segment, orgId);
  const [count, sample] = await Promise.all([
    q.countSegment(db, orgId, predicate),
    q.sampleSegment(db, orgId, predicate, SEGMENT_SAMPLE_SIZE),
  ]);
  return { count, sample: await contactViews(db, orgId, sample) };
}

export type ResolvedSegment = { segmentId: string; expiresAt: Date; page: Page<string> };

/**
 * Saves the query as a segment (or marks the saved one used) and answers its id with a page of the matching
 * contact ids in creation order, with the total. No transaction: the save is one atomic upsert, and the
 * evaluation only reads; holding both in one transaction would keep the saved row locked, and identical
 * resolves waiting on each other, for as long as the page query runs.
 */
export async function resolveSegment(tenant: Tenant, segment: SegmentQuery, page: PageRequest): Promise<ResolvedSegment> {
  const { db, organizationId: orgId } = tenant;
  const query = canonicalQuery(segment);
  const [saved, ids] = await Promise.all([
    q.upsertSavedSegment(db, orgId, queryHash(query), query),
    q.segmentIdPage(db, orgId, q.segmentPredicate(query, orgId), page),
  ]);
  return { segmentId: saved.id, expiresAt: expiresAt(saved.lastUsedAt), page: ids };
}

/**
 * For the Blasts section: the organization's saved segment by id, marked used now (a blast that references a
 * segment keeps it alive), with the query to evaluate; undefined when it is unknown, another organization's, or
 * purged (blasts answer 400 `VALIDATION_ERROR` on `segmentId`).
 */
export async function useSavedSegment(
  tenant: Tenant,
  segmentId: string,
): Promise<{ segmentId: string; query: SegmentQuery; expiresAt: Date } | undefined> {
  const row = await q.useSavedSegment(tenant.db, tenant.organizationId, segmentId);
  return row && { segmentId: row.id, query: row.query as SegmentQuery, expiresAt: expiresAt(row.lastUsedAt) };
}

/**
 * The scheduled purge (every organization, system handle): drops segments unused for SEGMENT_TTL_DAYS.
 * When the Blasts section is built it must keep what its blasts hold: call useSavedSegment on create, audience
 * update and launch, and make this purge skip segments a blast that has not finished still references (a draft
 * or a blast scheduled further out than the TTL would otherwise lose its audience).
 */
export function purgeExpiredSegments(db: Db): Promise<number> {
  return q.deleteSegmentsUnusedFor(db, SEGMENT_TTL_DAYS);
}

const expiresAt = (lastUsedAt: Date) => new Date(lastUsedAt.getTime() + SEGMENT_TTL_DAYS * DAY_MS);

/** The query as saved and hashed: `match` defaulted (the validator fills it in too; the CLI may not). */
function canonicalQuery(segment: SegmentQuery): SegmentQuery {
  return { match: segment.match ?? 'all', conditions: segment.conditions };
}

/** SHA-256 of the canonical JSON: object keys sorted at every level, arrays in their order. */
function queryHash(query: SegmentQuery): string {
  return createHash('sha256').update(canonicalJson(query)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
