// The one tenant-scoped query pattern: every query on tenant data goes through tenant(), which adds
// `organization_id = $org`. Another organization's ids therefore simply find nothing (→ 404).
interface Whereable {
  where(lhs: never, op: never, rhs: never): unknown;
}

export function tenant<QB extends Whereable>(qb: QB, organizationId: string, column = 'organization_id'): QB {
  return (qb as unknown as { where(l: string, o: string, r: string): QB }).where(column, '=', organizationId);
}
