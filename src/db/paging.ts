// The one list-page pattern: newest first (created_at, then id, both descending), `limit`/`offset`, and the
// total in `total_count` from the same scan (count(*) over()), so a page costs one query. The HTTP side of
// pagination (page/limit in, {data, pagination} out) is src/http/pagination.ts.
import { sql, type SelectQueryBuilder } from 'kysely';

export function newestFirstPage<DB, TB extends keyof DB, O>(qb: SelectQueryBuilder<DB, TB, O>, page: { limit: number; offset: number }) {
  return qb
    .select(sql<string>`count(*) over()`.as('total_count'))
    .orderBy(sql`created_at`, 'desc')
    .orderBy(sql`id`, 'desc')
    .limit(page.limit)
    .offset(page.offset);
}
