// The one list-page pattern: `listPage(qb, page)` answers `{rows, total}` — the rows of one page and the total
// from the same scan (count(*) over()), so a page costs one query; past the last page (no row to carry the
// window count) one count query keeps `total` right. Order with `newestFirst` (created_at, then id, both
// descending) unless the list documents another order. The HTTP side (page/limit in, {data, pagination} out)
// is src/http/pagination.ts.
import { sql, type SelectQueryBuilder } from 'kysely';

/** A page of a list: which rows (`limit` from `offset`) and, for the answer, its number. */
export type PageRequest = { page: number; limit: number; offset: number };

export type Page<O> = { rows: O[]; total: number };

export function newestFirst<DB, TB extends keyof DB, O>(qb: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> {
  return qb.orderBy(sql`created_at`, 'desc').orderBy(sql`id`, 'desc');
}

/** `qb` selects the rows and holds the filters and the order; listPage adds the window, the count and the limit. */
export async function listPage<DB, TB extends keyof DB, O>(
  qb: SelectQueryBuilder<DB, TB, O>,
  page: { limit: number; offset: number },
): Promise<Page<O>> {
  const rows = (await pageQuery(qb, page).execute()) as Array<O & { total_count: string }>;
  return pageFromRows(rows, page, async () => {
    const counted = await (qb.clearSelect().clearOrderBy() as unknown as SelectQueryBuilder<DB, TB, object>)
      .select(sql<string>`count(*)`.as('n'))
      .executeTakeFirst();
    return Number((counted as { n?: string } | undefined)?.n ?? 0);
  });
}

/** What listPage runs: the rows of the page, each with the total (a compiled-once list builds this: src/db/compiled-once.ts). */
export function pageQuery<DB, TB extends keyof DB, O>(qb: SelectQueryBuilder<DB, TB, O>, page: { limit: number; offset: number }) {
  return qb
    .select(sql<string>`count(*) over()`.as('total_count'))
    .limit(page.limit)
    .offset(page.offset);
}

/** The page from pageQuery's rows; past the last page (no row to carry the total) the total is counted. */
export async function pageFromRows<O>(
  rows: Array<O & { total_count: string }>,
  page: { offset: number },
  count: () => Promise<number>,
): Promise<Page<O>> {
  if (rows.length > 0) {
    const total = Number(rows[0]!.total_count);
    return { rows: rows.map(({ total_count: _, ...row }) => row as O), total };
  }
  if (page.offset === 0) return { rows: [], total: 0 };
  return { rows: [], total: await count() };
}
