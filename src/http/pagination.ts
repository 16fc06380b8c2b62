// The one pagination helper: page/limit in (defaults from the document: page 1, limit 20, max 100),
// `{data, pagination}` out.
import type { PageRequest } from '../db/paging.ts';

export type { PageRequest };

export function pageOf(query: { page?: number; limit?: number }): PageRequest {
  const page = query.page ?? 1;
  const limit = query.limit ?? 20;
  return { page, limit, offset: (page - 1) * limit };
}

export function paginated<T>(data: T[], total: number, page: PageRequest) {
  return {
    data,
    pagination: { page: page.page, limit: page.limit, total, hasMore: page.offset + data.length < total },
  };
}

/**
 * A list the document answers whole by default (bounded lists: tags, keyword rules, endpoints …, see Pagination in
 * openapi.yaml): every item when the request names neither `page` nor `limit`, as they always answered, else the
 * page asked for, like every list. The items are read whole either way: each such list is capped per organization
 * (at most a few thousand rows), so a page costs no more than the whole list did.
 */
export function wholeOrPaged<T>(items: T[], query: { page?: number; limit?: number } | undefined) {
  if (query?.page === undefined && query?.limit === undefined)
    return { data: items, pagination: { page: 1, limit: Math.max(1, items.length), total: items.length, hasMore: false } };
  const page = pageOf(query);
  return paginated(items.slice(page.offset, page.offset + page.limit), items.length, page);
}
