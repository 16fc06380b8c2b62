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
