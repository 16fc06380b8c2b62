// The one read the compliance gate makes per send: DNC entry, opt-out, latest active override and the content
// rules that apply to the message type, in a single round trip.
import { sql } from 'kysely';
import type { Db } from '../../database.ts';
import { tenant } from '../../tenant.ts';

export type GateContentRule = {
  id: string;
  name: string;
  pattern: string;
  pattern_type: string;
  action: string;
  case_sensitive: boolean;
};

export type GateFacts = {
  dncListed: boolean;
  optedOut: boolean;
  /** Expiry of the latest override still active at `now`; null when none. */
  overrideUntil: Date | null;
  contentRules: GateContentRule[];
};

export async function loadGateFacts(
  db: Db,
  orgId: string,
  contact: { id: string; phone: string },
  messageType: string,
  now: Date,
): Promise<GateFacts> {
  const row = await db
    .selectNoFrom((eb) => [
      eb.exists(tenant(eb.selectFrom('dnc_entries'), orgId).select(sql`1`.as('x')).where('phone', '=', contact.phone)).as('dnc'),
      eb.exists(tenant(eb.selectFrom('opt_outs'), orgId).select(sql`1`.as('x')).where('phone', '=', contact.phone)).as('opted_out'),
      tenant(eb.selectFrom('compliance_overrides'), orgId)
        .select((o) => o.fn.max('expires_at').as('until'))
        .where('contact_id', '=', contact.id)
        .where('expires_at', '>', now)
        .as('override_until'),
      tenant(eb.selectFrom('content_rules'), orgId)
        .select(
          sql<GateContentRule[]>`coalesce(json_agg(json_build_object(
            'id', id, 'name', name, 'pattern', pattern, 'pattern_type', pattern_type,
            'action', action, 'case_sensitive', case_sensitive) order by created_at, id), '[]'::json)`.as('rules'),
        )
        .where('enabled', '=', true)
        .where(sql<boolean>`${messageType} = any(message_types)`)
        .as('content_rules'),
    ])
    .executeTakeFirstOrThrow();
  const until = row.override_until as Date | string | null;
  return {
    dncListed: Boolean(row.dnc),
    optedOut: Boolean(row.opted_out),
    overrideUntil: until === null ? null : new Date(until),
    contentRules: (row.content_rules ?? []) as GateContentRule[],
  };
}
