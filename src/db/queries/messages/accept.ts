// Accepting outbound messages for a set of recipients in one statement: the compliance gate (gateRows), the
// channel plan, the price, the conversation opened or updated, the message inserted (it is its own dispatch
// outbox: `dispatch_at`), and for a blast its recipient rows marked accepted or skipped with the reason. A direct
// send is the set of one. Content-dependent values (renderings, prices, previews) come in per content key,
// computed once per distinct content by the caller.
import { sql, type RawBuilder } from 'kysely';
import { rowsOf } from '../../rows.ts';
import type { JobInsert } from '../../../jobs/queue.ts';
import {
  contentRulesQuery,
  gateRows,
  recipientsOf,
  quietGroupColumns,
  quietGroupsSql,
  recipientContacts,
  type GateContentRule,
  type GateInputs,
  type QuietGroup,
  type Recipients,
} from '../compliance/gate.ts';
import { conversationIdsDerived, newConversationId } from '../conversations/conversations.ts';
import type { BlastBatchScope } from './dispatch.ts';
import type { MessageRow } from './messages.ts';
import { senderChoice, type SenderRow } from '../sender-ids/senders.ts';
import type { StoredProtocolConfig } from '../../tables/sender-ids.ts';
import type { TenantDb } from '../../tenant.ts';
import { compiledOnce } from '../../compiled-once.ts';
import { LINK_INDEX_CHARACTERS } from './links.ts';

/** What one rendering of a content costs and shows. */
export type Billing = { segments: number; encoding: string | null; costUnits: number; preview: string };

export type AcceptContent = {
  key: string;
  /** The content as stored (JSON). */
  content: string;
  /** The SMS/MMS channel this content falls back to, and whether it may (allowed by the request and usable by the sender). */
  fallbackChannel: string;
  fallbackOk: boolean;
  /** A chat-app message that needs no open session (an approved template): CHATAPP plans it whatever the session. */
  sessionFree: boolean;
  /** Billing on the requested channel, and on the fallback channel. */
  primary: Billing;
  fallback: Billing;
  /**
   * The sender named to carry the fallback when it is not the set's sender (an RCS agent's number), whether or not
   * it may send now; null: the sender itself, or no fallback. A message planned on the fallback at acceptance goes
   * from it (when `fallbackOk`); one planned on RCS records it (messages.fallback_sender_id) and moves to it when
   * it falls back later (dispatch.ts), which checks then that it may send.
   */
  fallbackSenderId: string | null;
  /**
   * Tracked links (src/domain/links/rewrite.ts): the placeholder of each message's token in `content`, and the
   * original URLs by index as a JSON array (stored as it is: a value of a compiled-once statement is never
   * transformed); null when none.
   */
  links: { placeholder: string; urlsJson: string } | null;
};

export type AcceptSet = {
  senderId: string;
  requested: string;
  /** Whether the sender may use the requested channel. */
  requestedUsable: boolean;
  messageType: string;
  origin: string;
  source: { type: string; blastId: string | null; botId: string | null; campaignId: string | null; handledBy: string };
  /** The message's origin ids besides the blast (migration 0050): the bot that sent it, the event trigger that started that bot, the acquisition campaign. */
  origins: { botId: string | null; eventTriggerId: string | null; acquisitionCampaignId: string | null };
  sessionHours: number;
  contents: readonly AcceptContent[];
  gate: GateInputs;
  recipients: Recipients;
  /**
   * A recipient's refusal when no channel is planned: NO_CHANNEL_AVAILABLE, SENDER_NOT_READY when the fallback sender
   * may not send, CHATAPP_SESSION_CLOSED when a chat-app sender's session with the contact is closed.
   */
  noRoute: 'NO_CHANNEL_AVAILABLE' | 'SENDER_NOT_READY' | 'CHATAPP_SESSION_CLOSED';
  /** A blast's batch: its recipient rows are marked accepted (with the message) or skipped (with the reason). */
  blastId?: string;
};

/**
 * How the accepted messages wake the dispatcher, inserted by the accepting statement itself: the dispatch queue's
 * job insert (jobInsertOf), and the scope of its jobs — `each`: one job for the messages due now (`{ messageIds }`,
 * `{ messageId }` for one) and one per held message, due at its `held_until` —, or one job for a blast batch
 * (`{ blast }`: the dispatcher drains the batch at its sender's rate and wakes again for the held ones). `notify` null: the caller nudges the workers after its
 * commit instead (a NOTIFY holds a database-wide lock until its transaction's commit is flushed).
 */
export type Wake = JobInsert & { scope: 'each' | { blast: BlastBatchScope } };

function wakeCtes(wake: Wake): RawBuilder<unknown> {
  const jobs =
    wake.scope === 'each'
      ? // The messages due now share one job (`{ messageIds }`, `{ messageId }` for one): the direct sends accepted
        // together (direct-batches.ts) insert one job row, not one each (a row, its indexes, its queue's key lock).
        sql`(select coalesce(json_agg(j.job), '[]'::json)::text from (
        select json_build_object('data', case when count(*) = 1 then json_build_object('messageId', min(i.id::text))
          else json_build_object('messageIds', json_agg(i.id)) end) as job
        from ins i where i.held_until is null or i.held_until <= now() having count(*) > 0
        union all
        select json_build_object('data', json_build_object('messageId', i.id), 'startAfter', i.held_until)
        from ins i where i.held_until > now()) j)`
      : sql`(select case when exists (select 1 from ins) then ${JSON.stringify([{ data: { blast: wake.scope.blast } }])} else '[]' end)`;
  const notify = wake.notify
    ? sql`,
    woken as (select ${sql.raw(wake.notify)} from ins i where i.held_until is null or i.held_until <= now() limit 1)`
    : sql``;
  return sql`,
    wake as (${sql.raw(wake.head)}${jobs}${sql.raw(wake.tail)})${notify}`;
}

/** A condition on the statement's result that reads the notifying CTE, so PostgreSQL runs it (a plain select in WITH runs only when referenced). */
const wokenRead = (wake: Wake) => (wake.notify ? sql`(select count(*) from woken) >= 0` : sql`true`);

/** What the channel plan of a send depends on besides the recipient. */
export type RouteInputs = { requested: string; requestedUsable: boolean; sessionHours: number; now: Date | string };

/** Whether the conversation `cv` has an open chat-app session at `now`: the contact wrote on CHATAPP within `sessionHours` (a blast's estimate asks too). */
export const chatSessionOpen = (a: Pick<RouteInputs, 'now' | 'sessionHours'>): RawBuilder<boolean> =>
  sql<boolean>`cv.session_channel = 'CHATAPP' and cv.last_inbound_at > ${a.now}::timestamptz - make_interval(hours => ${a.sessionHours})`;

/**
 * The channel plan, per recipient: 'primary' (the requested channel), 'fallback' (its SMS/MMS fallback, allowed by
 * the request and usable by the sender: `fallbackOk`) or null (none). SMS/MMS go as requested when the sender may
 * use them; CHATAPP needs an open chat-app session of the conversation (`cv`) unless the content needs none
 * (`sessionFree`: an approved template); RCS is tried unless the handset is
 * known not to have it. The one plan of every send and preview (a blast's estimate prices an unknown capability on
 * the fallback instead, as BlastEstimate documents: estimateGroups).
 */
function routeSql(
  a: RouteInputs,
  fallbackOk: RawBuilder<unknown>,
  rcsCapable: RawBuilder<unknown>,
  sessionFree: RawBuilder<unknown>,
  withConversation = true,
): RawBuilder<string | null> {
  // Without the conversation (`cv`) at hand, no chat-app session is open (a plan made before the conversation is known).
  const open = withConversation ? chatSessionOpen(a) : sql`false`;
  const session = sql`(${sessionFree} or ${open})`;
  return sql<string | null>`case
          when ${a.requested} in ('SMS', 'MMS') then case when ${a.requestedUsable} then 'primary' end
          when ${a.requested} = 'CHATAPP' then
            case when ${a.requestedUsable} and ${session} then 'primary'
                 when ${fallbackOk} then 'fallback' end
          else case when ${a.requestedUsable} and ${rcsCapable} is distinct from false then 'primary' when ${fallbackOk} then 'fallback' end
        end`;
}

/** The plan a send to one contact would make now (routeSql), for a preview: undefined when the contact is not found. */
export async function plannedRoute(
  db: TenantDb,
  orgId: string,
  q: RouteInputs & { contactId: string; senderId: string | null; fallbackOk: boolean; sessionFree: boolean },
): Promise<{ route: 'primary' | 'fallback' | null } | undefined> {
  const res = await sql<{ route: 'primary' | 'fallback' | null }>`
    select ${routeSql(q, sql`${q.fallbackOk}`, sql`g.rcs_capable`, sql`${q.sessionFree}`)} as route
    from contacts g
    left join lateral (select cv.session_channel, cv.last_inbound_at from conversations cv
      where cv.organization_id = ${orgId}::uuid and cv.contact_id = g.id and cv.sender_id = ${q.senderId}::uuid limit 1) cv on true
    where g.organization_id = ${orgId}::uuid and g.id = ${q.contactId}::uuid`.execute(db);
  return res.rows[0];
}

/**
 * The recipient's conversation with the sender, probed per recipient (a lateral subquery with `offset 0` is never
 * flattened into a join, so no statistics choose its index). Where every conversation's id is derived from its key
 * (conversationIdsDerived) the primary key answers alone. Otherwise the derived id first, then the unique key for a
 * conversation from before the derivation: planned on statistics that had not seen the organization's newest
 * conversations, that probe may read the organization's others (migration 0035).
 */
function conversationProbe(
  orgId: string,
  contact: RawBuilder<unknown>,
  sender: RawBuilder<unknown>,
  newId: RawBuilder<string>,
  derivedIds: boolean,
): RawBuilder<unknown> {
  const columns = sql`cv.id, cv.session_channel, cv.last_inbound_at`;
  // The organization is checked outside the probe, where no index on (organization_id, …) competes with the key.
  if (derivedIds)
    return sql`left join lateral (select ${columns}, cv.organization_id from conversations cv where cv.id = ${newId} offset 0) cv on cv.organization_id = ${orgId}::uuid`;
  return sql`left join lateral (
          (select ${columns} from conversations cv
            where cv.id = ${newId} and cv.organization_id = ${orgId}::uuid and cv.contact_id = ${contact} and cv.sender_id = ${sender})
          union all
          (select ${columns} from conversations cv
            where cv.organization_id = ${orgId}::uuid and cv.contact_id = ${contact} and cv.sender_id = ${sender})
          limit 1) cv on true`;
}

/**
 * Each message's tracked-link token, when its content has links: 8 random bytes of two v4 UUIDs (their bytes
 * 1–6 and 11–12 carry no version or variant bits) in base64url, 11 characters like the placeholder
 * (11, as the redirect expects: LINK_CODE), so the text keeps its length, segments and price.
 */
const linkTokenSql = sql`case when v.link_placeholder is not null then
          rtrim(translate(encode(substring(uuid_send(gen_random_uuid()) from 1 for 6) || substring(uuid_send(gen_random_uuid()) from 11 for 2), 'base64'), '+/', '-_'), '=')
        end`;

/** A text of the content with the message's token in place of the placeholder (unchanged without tracked links). */
const linked = (text: RawBuilder<unknown>) =>
  sql`case when d.link_token is null then ${text} else replace(${text}, d.link_placeholder, d.link_token) end`;

/**
 * The network the recipient's number was originally allocated to (migration 0049): the longest prefix of its E.164
 * digits in phone_number_carriers, one probe of the primary key for all of them; null when none matches. Only the
 * lengths the table holds are tried: its shortest and longest prefix, read once per statement (uncorrelated, so
 * InitPlans; two probes of phone_number_carriers_length_idx, migration 0056).
 */
const ORIGINAL_CARRIER = sql`(select pc.carrier from phone_number_carriers pc
          where pc.prefix = any(array(select left(ltrim(s.phone, '+'), n) from generate_series(
            (select min(length(l.prefix)) from phone_number_carriers l), (select max(length(l.prefix)) from phone_number_carriers l)) n))
          order by length(pc.prefix) desc limit 1)`;

function acceptStatement(orgId: string, a: AcceptSet, derivedIds: boolean, tail: RawBuilder<unknown>, wake: Wake): RawBuilder<unknown> {
  const col = <T>(f: (c: AcceptContent) => T) => a.contents.map(f);
  const marked = a.blastId
    ? sql`, marked as (
        update blast_recipients br set
          status = case when s.skip_reason is null then 'accepted' else 'skipped' end,
          message_id = case when s.skip_reason is null then s.message_id end,
          skip_reason = s.skip_reason,
          updated_at = now()
        from s where br.organization_id = ${orgId}::uuid and br.blast_id = ${a.blastId}::uuid and br.contact_id = s.contact_id and br.status = 'pending'
        returning 1)`
    : sql``;
  // A fallback carried by another sender (`fb_sender`, an RCS agent's number): its messages go from that sender, in
  // the recipient's conversation with it (the number replies come back to). The plan comes first, then the
  // conversation of the sender that carries it; only an RCS request plans so (routeSql reads no conversation).
  const carried = a.contents.some((c) => c.fallbackSenderId !== null);
  const senderCol = carried ? sql`s.send_sender` : sql`${a.senderId}::uuid`;
  // A message that tries RCS first records the sender its fallback goes from (`fallback_sender_id`): dispatch moves it
  // there when the fallback is found later (the handset has no RCS, the RCS delivery fails), checking then that it may
  // send. It may fall back when a carrier of the fallback was found now or one is named (a named one refusing now
  // may be ready by then; if not, the message fails SENDER_NOT_READY at the move).
  const fallbackAllowedCol = carried ? sql`s.fb_ok or s.fb_sender is not null` : sql`s.fb_ok`;
  const fallbackSenderCol = carried ? sql`case when s.route = 'fallback' then null else s.fb_sender end` : sql`null::uuid`;
  const fbSenderColumn = carried ? [{ name: 'fb_sender', type: 'uuid', values: col((c) => c.fallbackSenderId) }] : [];
  const route = (withConversation: boolean) =>
    routeSql({ ...a, now: a.gate.now }, sql`v.fb_ok`, sql`g.rcs_capable`, sql`v.session_free`, withConversation);
  // Where every conversation's id is derived from its key (conversationIdsDerived), the recipient's conversation id
  // is known without reading it, whether it exists or is opened here: the conversation is read only when the plan
  // asks for its chat-app session (a CHATAPP request, never a carried fallback: routeSql reads none then). Read for
  // every recipient, it was 2 of the blast acceptance statement's shared buffers per recipient (bench part l).
  const probed = (newId: RawBuilder<string>, probe: RawBuilder<unknown>) =>
    derivedIds ? { id: newId, join: sql`` } : { id: sql`coalesce(cv.id, ${newId})`, join: probe };
  let plan: RawBuilder<unknown>;
  if (carried) {
    const newId = newConversationId(sql`${orgId}::uuid`, sql`r.contact_id`, sql`r.send_sender`);
    const cv = probed(newId, conversationProbe(orgId, sql`r.contact_id`, sql`r.send_sender`, newId, derivedIds));
    plan = sql`d as materialized (
      select r.*, ${cv.id} as conversation_id
      from (select r0.*, case when r0.route = 'fallback' then coalesce(r0.fb_sender, ${a.senderId}::uuid) else ${a.senderId}::uuid end as send_sender
        from (select g.id as contact_id, g.phone, g.block_code, g.held_until, v.*, time_ordered_uuid() as message_id, ${linkTokenSql} as link_token,
            ${route(false)} as route
          from g join v on v.key = g.key) r0) r
      ${cv.join}
    ),`;
  } else {
    const newId = newConversationId(sql`${orgId}::uuid`, sql`g.id`, sql`${a.senderId}::uuid`);
    const probe = conversationProbe(orgId, sql`g.id`, sql`${a.senderId}::uuid`, newId, derivedIds);
    const session = a.requested === 'CHATAPP';
    const cv = session ? { id: sql`coalesce(cv.id, ${newId})`, join: probe } : probed(newId, probe);
    plan = sql`d as materialized (
      select g.id as contact_id, g.phone, g.block_code, g.held_until, v.*, time_ordered_uuid() as message_id,
        ${cv.id} as conversation_id, ${linkTokenSql} as link_token,
        ${route(session || !derivedIds)} as route
      from g join v on v.key = g.key
      ${cv.join}
    ),`;
  }
  // The tracked links' rows, when a content has links: without them the statement has no insert into message_links
  // (its plan, opened and initialised at each execution, is the cost of a direct send's statement: issue 38, m1).
  const links = a.contents.some((c) => c.links !== null)
    ? sql`,
    links as (
      insert into message_links (code, organization_id, message_id, contact_id, blast_id, url)
      select s.link_token || substr(${LINK_INDEX_CHARACTERS}, u.n::int, 1), ${orgId}::uuid, s.message_id, s.contact_id, ${a.blastId ?? null}::uuid, u.url
      from s cross join lateral jsonb_array_elements_text(s.link_urls) with ordinality u(url, n)
      where s.skip_reason is null and s.link_token is not null
    )`
    : sql``;
  // Each message's program, brand and campaign registration (migration 0059): its sender's attribution, read once
  // for the set's sender, or per message when a fallback is carried by another sender.
  const attribution = carried
    ? sql`left join lateral sender_attribution(${orgId}::uuid, s.send_sender) attribution on true`
    : sql`left join attribution on true`;
  const attributionCte = carried
    ? sql``
    : sql`attribution as materialized (select * from sender_attribution(${orgId}::uuid, ${a.senderId}::uuid)),`;
  // A direct send's statement has one shape: prepared once per connection (src/db/prepared.ts).
  return sql`${sql.raw(a.blastId ? '' : '/* prepared:accept-one */')}
    with v as (
      select * from ${rowsOf('v', [
        { name: 'key', type: 'text', values: col((c) => c.key) },
        { name: 'content', type: 'jsonb', values: col((c) => c.content) },
        { name: 'fb_channel', type: 'text', values: col((c) => c.fallbackChannel) },
        { name: 'fb_ok', type: 'bool', values: col((c) => c.fallbackOk) },
        { name: 'session_free', type: 'bool', values: col((c) => c.sessionFree) },
        { name: 'p_segments', type: 'int', values: col((c) => c.primary.segments) },
        { name: 'p_encoding', type: 'text', values: col((c) => c.primary.encoding) },
        { name: 'p_cost', type: 'int', values: col((c) => c.primary.costUnits) },
        { name: 'p_preview', type: 'text', values: col((c) => c.primary.preview) },
        { name: 'f_segments', type: 'int', values: col((c) => c.fallback.segments) },
        { name: 'f_encoding', type: 'text', values: col((c) => c.fallback.encoding) },
        { name: 'f_cost', type: 'int', values: col((c) => c.fallback.costUnits) },
        { name: 'f_preview', type: 'text', values: col((c) => c.fallback.preview) },
        { name: 'link_placeholder', type: 'text', values: col((c) => c.links?.placeholder ?? null) },
        { name: 'link_urls', type: 'jsonb', values: col((c) => c.links?.urlsJson ?? null) },
        ...fbSenderColumn,
      ])}
    ),
    g as materialized (${gateRows(orgId, a.recipients, a.gate)}),
    ${plan}
    ${attributionCte}
    s as materialized (
      select d.*, coalesce(d.block_code, case when d.route is null then ${a.noRoute}::text end) as skip_reason,
        case when d.route = 'fallback' then d.fb_channel else ${a.requested} end as planned_channel,
        case when d.route = 'fallback' then d.f_segments else d.p_segments end as segments,
        case when d.route = 'fallback' then d.f_encoding else d.p_encoding end as encoding,
        case when d.route = 'fallback' then d.f_cost else d.p_cost end as cost_units,
        ${linked(sql`case when d.route = 'fallback' then d.f_preview else d.p_preview end`)} as preview,
        ${linked(sql`d.content::text`)}::jsonb as sent_content
      from d
    ),
    conv as (
      insert into conversations as cv (id, organization_id, contact_id, sender_id, source_type, source_blast_id, source_bot_id, source_campaign_id,
        handled_by, bot_id, first_message_id, last_message_at, last_outbound_at, last_message_preview, status)
      select s.conversation_id, ${orgId}::uuid, s.contact_id, ${senderCol}, ${a.source.type}, ${a.source.blastId}::uuid, ${a.source.botId}::uuid, ${a.source.campaignId}::uuid,
        ${a.source.handledBy}, ${a.source.botId}::uuid, s.message_id, now(), now(), s.preview, 'open'
      from s where s.skip_reason is null
      on conflict (organization_id, contact_id, sender_id) do update set
        last_message_at = excluded.last_message_at, last_outbound_at = excluded.last_outbound_at,
        last_message_preview = excluded.last_message_preview, first_message_id = coalesce(cv.first_message_id, excluded.first_message_id),
        status = 'open', updated_at = now()
    ),
    ins as (
      insert into messages (id, organization_id, conversation_id, contact_id, contact_phone, sender_id, direction, requested_channel,
        planned_channel, fallback_used, fallback_reason, fallback_allowed, message_type, status, content, segments, encoding,
        estimated_cost_units, held_until, origin, dispatch_at, blast_id, carrier, bot_id, event_trigger_id, acquisition_campaign_id,
        fallback_sender_id, program_id, brand_registration_id, campaign_registration_id)
      select s.message_id, ${orgId}::uuid, s.conversation_id, s.contact_id, s.phone, ${senderCol}, 'outbound', ${a.requested},
        s.planned_channel, s.route = 'fallback', case when s.route = 'fallback' then 'RCS_NOT_SUPPORTED' end, ${fallbackAllowedCol}, ${a.messageType},
        case when s.held_until is null then 'queued' else 'held' end, s.sent_content, s.segments, s.encoding,
        s.cost_units, s.held_until, ${a.origin}, coalesce(s.held_until, now()), ${a.blastId ?? null}::uuid, ${ORIGINAL_CARRIER},
        ${a.origins.botId}::uuid, ${a.origins.eventTriggerId}::text, ${a.origins.acquisitionCampaignId}::uuid,
        ${fallbackSenderCol}, attribution.program_id, attribution.brand_registration_id, attribution.campaign_registration_id
      from s ${attribution} where s.skip_reason is null
      returning *
    )${links}${marked}${wakeCtes(wake)}
    ${tail}`;
}

/** A direct send's set, without its recipients (the statement's `contactIds` and `keys`): what acceptOne takes. */
export type DirectSet = Omit<AcceptSet, 'recipients' | 'blastId'>;

export type Outcome = { recipient_id: string; recipient_skip_reason: string | null } & (({ id: string } & MessageRow) | { id: null });

/**
 * A direct send's accepting statement, compiled once per shape (src/db/compiled-once.ts): building it with Kysely,
 * guarding and compiling it was ~15 % of the API's CPU per send (bench part m1). `requested` is branched on (a
 * CHATAPP request reads the conversation's session) and the wake's job insert is raw SQL: both are the shape's.
 * Its recipients are `contactIds[i]` with the content of key `keys[i]`: one direct send, or the direct sends
 * accepted together (acceptDirect); the number of them is the shape's (one goes as scalars: rows.ts).
 */
const acceptOne = compiledOnce(
  'accept-one',
  (_db, p: { organizationId: string; contactIds: string[]; keys: string[]; derivedIds: boolean; set: DirectSet; wake: Wake }) => {
    const recipients = recipientsOf(p.contactIds, p.keys);
    const tail = sql`select s.contact_id as recipient_id, s.skip_reason as recipient_skip_reason, m.* from s left join ins m on m.id = s.message_id where ${wokenRead(p.wake)}`;
    return sql<Outcome>`${acceptStatement(p.organizationId, { ...p.set, recipients }, p.derivedIds, tail, p.wake)}`;
  },
  { keep: ['requested', 'wake'] },
);

/** The gate's SQL inputs only (a prepared gate also carries the texts of its reasons). */
const gateInputsOf = ({ messageType, now, skip, blockedKeys, holds, defaults }: GateInputs): GateInputs => ({
  messageType,
  now,
  skip,
  blockedKeys,
  holds,
  defaults,
});

/**
 * Accepts the set for one contact, `contactId` (the set's `recipients` are that contact), and answers its outcome:
 * its message, or its skip reason.
 */
export async function acceptEach(db: TenantDb, orgId: string, a: AcceptSet, contactId: string, wake: Wake): Promise<Outcome[]> {
  const { recipients: _recipients, blastId: _blastId, ...set } = a;
  return acceptDirect(db, orgId, set, [contactId], wake);
}

/** A contact id no contact has (ids are random or time-ordered UUIDs): padding of acceptDirect's recipients. */
const NO_CONTACT = '00000000-0000-0000-0000-000000000000';

/**
 * Accepts direct sends of one set in one statement: `contactIds[i]` gets the content of the set's i-th key when
 * `keys` is absent (one send: the set's one content), else of key `keys[i]`. One outcome per contact found, with
 * `recipient_id` its contact; a contact may appear once (its conversation is upserted once per statement).
 */
export async function acceptDirect(
  db: TenantDb,
  orgId: string,
  set: DirectSet,
  contactIds: string[],
  wake: Wake,
  keys: string[] = set.contents.map((c) => c.key),
): Promise<Outcome[]> {
  // The gate's SQL inputs only: a statement's values are plain data (compiled-once.ts).
  const data: DirectSet = { ...set, gate: gateInputsOf(set.gate) };
  // The number of recipients is the statement's shape, each planned on each connection: padded up to a power of two
  // with a contact id no contact has (the gate finds no row for it), a process has 6 shapes of 1 to 32, not 32.
  const padded = 2 ** Math.ceil(Math.log2(contactIds.length)) - contactIds.length;
  const ids = [...contactIds, ...Array<string>(padded).fill(NO_CONTACT)];
  const recipientKeys = [...keys, ...Array<string>(padded).fill(keys[0]!)];
  const derivedIds = await conversationIdsDerived(db);
  return acceptOne.execute(db, { organizationId: orgId, contactIds: ids, keys: recipientKeys, derivedIds, set: data, wake });
}

/** Accepts the set and answers the counts, and the messages when `withMessages` (for their events). */
export async function acceptAll(
  db: TenantDb,
  orgId: string,
  a: AcceptSet,
  withMessages: boolean,
  wake: Wake,
): Promise<{ accepted: number; skipped: number; messages: MessageRow[] }> {
  const derivedIds = await conversationIdsDerived(db);
  if (withMessages) {
    // No join of the set with its inserted rows (the planner cannot see their number): the count beside them.
    const tail = sql`select x.skipped, m.* from (select count(*) filter (where skip_reason is not null)::int as skipped from s) x left join ins m on true where ${wokenRead(wake)}`;
    const rows = (
      await sql<MessageRow & { skipped: number; id: string | null }>`${acceptStatement(orgId, a, derivedIds, tail, wake)}`.execute(db)
    ).rows;
    const messages = rows.filter((r) => r.id !== null) as MessageRow[];
    return { accepted: messages.length, skipped: rows[0]?.skipped ?? 0, messages };
  }
  const tail = sql`select count(*) filter (where skip_reason is null)::int as accepted, count(*) filter (where skip_reason is not null)::int as skipped from s where ${wokenRead(wake)}`;
  const row = (await sql<{ accepted: number; skipped: number }>`${acceptStatement(orgId, a, derivedIds, tail, wake)}`.execute(db)).rows[0]!;
  return { ...row, messages: [] };
}

/** The program a sender sends under, as senderProgramSql builds it (the domain reads `state` as its ProgramState). */
type SenderProgramRow = {
  role: string | null;
  state: {
    status: string;
    channels: string[];
    registrationSenderId: string;
    brand: { status: string; rejectionReasons: string[] } | null;
    campaign: { status: string; rejectionReasons: string[] } | null;
    attached: Array<{
      senderId: string;
      role: string;
      status: string;
      type: string;
      rcsAgentPhase: string | null;
      enabledProtocols: string[];
    }>;
  };
};

/** The fallback sender as fallbackSenderSql finds it, with the facts the sending rule asks of any sender. */
type FallbackSenderRow = {
  sender: {
    id: string;
    type: string;
    is_sandbox: boolean;
    rcs_agent_phase: string | null;
    status: string;
    send_ready: boolean;
    status_reason: string | null;
    provider: string | null;
  };
  protocols: SendFacts['protocols'];
  program: SenderProgramRow | null;
  recipientIsTestDevice: boolean | null;
};

/** What a send reads before its set statement, in one round trip (SendFactsQuery says which parts). */
export type SendFacts = {
  /** The named sender, or the organization's default (senderChoice); undefined when none. */
  sender: SenderRow | undefined;
  protocols: Array<{ type: string; status: string; config: StoredProtocolConfig | null }>;
  /** The program the sender sends under (sending-rule.ts `SenderProgram`): the one it is attached to, else its registration program. */
  program: SenderProgramRow | null;
  /** Whether the contact is an ACCEPTED test device of the sender; null without a contact (a blast batch). */
  testDevice: boolean | null;
  /** The sender that carries the fallback when the sender cannot (fallbackSenderSql), with the same facts; null when none. */
  fallback: FallbackSenderRow | null;
  rules: GateContentRule[];
  quietGroups: QuietGroup[] | null;
  /** Whether an active endpoint subscribes to one of `eventTypes`. */
  subscribed: boolean;
};

export type SendFactsQuery = {
  senderId: string | undefined;
  messageType: string;
  rules: boolean;
  /** The recipients' quiet groups, when quiet hours apply: a set's `recipients` (a direct send's: each contact's). */
  quiet: { recipients?: Recipients; defaults: { start: string; end: string } } | null;
  eventTypes: string[];
};

type FactsRow = SenderRow & {
  facts_protocols: SendFacts['protocols'];
  facts_program: SendFacts['program'];
  facts_test_device: boolean | null;
  facts_fallback: SendFacts['fallback'];
  facts_rules: GateContentRule[];
  facts_quiet: QuietGroup[] | null;
  facts_subscribed: boolean;
};

/** The send's read of a set (loadSendFacts); `recipients`: whose quiet groups it reads, when `f.quiet`. */
function factsStatement(
  db: TenantDb,
  orgId: string,
  f: Omit<SendFactsQuery, 'quiet'> & { quiet: { defaults: { start: string; end: string } } | null },
  recipients: Recipients | undefined,
): RawBuilder<FactsRow> {
  if (f.quiet && !recipients) throw new Error('loadSendFacts: quiet hours of a set need its recipients');
  const quiet = f.quiet
    ? sql`(select coalesce(json_agg(json_build_object('tz', tz, 'prefix', prefix, 'start', qs, 'end', qe)), '[]'::json)
        from (${quietGroupsSql(orgId, recipients!, f.quiet.defaults)}) x)`
    : sql`null`;
  return sql<FactsRow>`
      with s as (${senderChoice(db, orgId, f.senderId)})
      select s.*, ${senderFactsColumns(db, orgId, f)},
        null::boolean as facts_test_device,
        ${quiet} as facts_quiet
      from (select 1) one left join s on true`;
}

/**
 * The columns of the send's read that concern its sender, not its recipients: the fallback's facts leave
 * `recipientIsTestDevice` null (a direct send's read fills it in per contact).
 */
function senderFactsColumns(db: TenantDb, orgId: string, f: Pick<SendFactsQuery, 'messageType' | 'rules' | 'eventTypes'>) {
  const rules = f.rules
    ? sql`(select coalesce(json_agg(r), '[]'::json) from (${contentRulesQuery(db, orgId, f.messageType)}) r)`
    : sql`'[]'::json`;
  return sql`${protocolsSql(orgId, 's')} as facts_protocols,
        ${senderProgramSql(orgId, 's')} as facts_program,
        (select ${senderFactsJson(orgId, 'fb', sql`null::boolean`)} from (${fallbackSenderSql(orgId)}) fb) as facts_fallback,
        ${rules} as facts_rules,
        exists (select 1 from webhook_endpoints w where w.organization_id = ${orgId}::uuid and w.is_active and w.events && ${f.eventTypes}::text[]) as facts_subscribed`;
}

/** What the direct sends' read answers of each contact found (contactFacts). */
type ContactFactsJson = {
  id: string;
  testDevice: boolean;
  fallbackTestDevice: boolean | null;
  quiet: { tz: string; prefix: string; qs: string; qe: string } | null;
};

/** The row of the send's read, less what concerns its recipients. */
type SenderFactsRow = Omit<FactsRow, 'facts_test_device' | 'facts_quiet'>;

/** The query of direct sends that share their sender question (src/domain/messaging/send-reads.ts): one statement for all. */
export type DirectFactsQuery = Omit<SendFactsQuery, 'quiet'> & { quiet: { defaults: { start: string; end: string } } | null };

/**
 * The read of direct sends to `contactIds` (one, or the sends of one read lane: send-reads.ts), compiled once per
 * shape (src/db/compiled-once.ts): building, guarding and compiling it with Kysely was ~10 % of the API's CPU per
 * send (bench part m1). The sender's facts once; then, for each contact found, whether it is an ACCEPTED test
 * device of the sender and of its fallback sender, and its quiet-hours group. The ids travel as one JSON text, so
 * the statement has one shape whatever their number.
 */
const contactFacts = compiledOnce('send-facts', (db, p: DirectFactsQuery & { organizationId: string; contactIdsJson: string }) => {
  const orgId = p.organizationId;
  const recipients = sql`select value::uuid as contact_id, '' as key from json_array_elements_text(${p.contactIdsJson}::json)`;
  const fallbackId = sql`(select fb.id from (${fallbackSenderSql(orgId)}) fb)`;
  const quiet = p.quiet
    ? sql`(select row_to_json(q) from (select ${quietGroupColumns(p.quiet.defaults.start, p.quiet.defaults.end)}) q)`
    : sql`null::json`;
  const contacts = sql`(select coalesce(json_agg(json_build_object(
          'id', c.id,
          'testDevice', exists (${acceptedTestDevices(orgId, sql.ref('s.id'))} and c.id = r.contact_id),
          'fallbackTestDevice', case when ${fallbackId} is null then null
            else exists (${acceptedTestDevices(orgId, fallbackId)} and c.id = r.contact_id) end,
          'quiet', ${quiet})), '[]'::json)
        ${recipientContacts(orgId, recipients, 'probe')})`;
  return sql<SenderFactsRow & { facts_contacts: ContactFactsJson[] }>`/* prepared:send-facts */
      with s as (${senderChoice(db as TenantDb, orgId, p.senderId)})
      select s.*, ${senderFactsColumns(db as TenantDb, orgId, p)},
        ${contacts} as facts_contacts
      from (select 1) one left join s on true`;
});

/** The facts of a set's send (a blast batch): no contact of its own; quiet groups of its recipients. */
export async function loadSendFacts(db: TenantDb, orgId: string, f: SendFactsQuery): Promise<SendFacts> {
  const quiet = f.quiet && { defaults: f.quiet.defaults };
  const row = (await factsStatement(db, orgId, { ...f, quiet }, f.quiet?.recipients).execute(db)).rows[0]!;
  const { facts_test_device, facts_quiet, ...rest } = row;
  return { ...senderFacts(rest), testDevice: facts_test_device, quietGroups: facts_quiet };
}

/**
 * The facts of direct sends to `contactIds` (the same sender question), in one statement: each contact's, by its
 * id; a contact not of the organization is absent.
 */
export async function loadDirectSendFacts(
  db: TenantDb,
  orgId: string,
  f: DirectFactsQuery,
  contactIds: readonly string[],
): Promise<Map<string, SendFacts>> {
  const [row] = await contactFacts.execute(db, { ...f, organizationId: orgId, contactIdsJson: JSON.stringify(contactIds) });
  const { facts_contacts, ...rest } = row!;
  const shared = senderFacts(rest);
  return new Map(
    facts_contacts.map((c) => [
      c.id,
      {
        ...shared,
        fallback: shared.fallback && { ...shared.fallback, recipientIsTestDevice: c.fallbackTestDevice },
        testDevice: c.testDevice,
        quietGroups: f.quiet ? [{ tz: c.quiet!.tz, prefix: c.quiet!.prefix, start: c.quiet!.qs, end: c.quiet!.qe }] : null,
      },
    ]),
  );
}

/** The sender's part of a read's row. */
function senderFacts(row: SenderFactsRow): Omit<SendFacts, 'testDevice' | 'quietGroups'> {
  const { facts_protocols, facts_program, facts_fallback, facts_rules, facts_subscribed, ...sender } = row;
  return {
    sender: sender.id ? (sender as SenderRow) : undefined,
    protocols: facts_protocols,
    program: facts_program,
    fallback: facts_fallback,
    rules: facts_rules,
    subscribed: facts_subscribed,
  };
}

/** The contacts (`c`) that are ACCEPTED test devices of a sender: a select the caller narrows (`and c.id …`). */
const acceptedTestDevices = (orgId: string, senderId: RawBuilder<unknown>) =>
  sql`select c.id from rcs_test_devices d join contacts c on c.organization_id = d.organization_id and c.phone = d.phone
        where d.organization_id = ${orgId}::uuid and d.sender_id = ${senderId} and d.status = 'ACCEPTED'`;

/** A sender (`alias`) with the facts the sending rule asks of it (FallbackSenderRow), as JSON. */
function senderFactsJson(orgId: string, alias: string, testDevice: RawBuilder<unknown>): RawBuilder<unknown> {
  const c = (column: string) => sql.ref(`${alias}.${column}`);
  return sql`json_build_object('sender', json_build_object('id', ${c('id')}, 'type', ${c('type')}, 'is_sandbox', ${c('is_sandbox')},
            'rcs_agent_phase', ${c('rcs_agent_phase')}, 'status', ${c('status')}, 'send_ready', ${c('send_ready')},
            'status_reason', ${c('status_reason')}, 'provider', ${c('provider')}),
          'protocols', ${protocolsSql(orgId, alias)}, 'program', ${senderProgramSql(orgId, alias)}, 'recipientIsTestDevice', ${testDevice})`;
}

/**
 * A message's recorded fallback sender (messages.fallback_sender_id) as the sending rule asks of it when the
 * message moves there (dispatch.ts), read as loadSendFacts reads it (`recipientIsTestDevice` left null), and which
 * of `contactIds` are its ACCEPTED test devices. `facts` null when the sender is gone.
 */
export async function fallbackSenderFacts(
  db: TenantDb,
  orgId: string,
  senderId: string,
  contactIds: readonly string[],
): Promise<{ facts: FallbackSenderRow | null; testDevices: ReadonlySet<string> }> {
  const row = (
    await sql<{ facts: FallbackSenderRow | null; test_devices: string[] }>`
      select (select ${senderFactsJson(orgId, 'fb', sql`null::boolean`)} from sender_ids fb
          where fb.organization_id = ${orgId}::uuid and fb.id = ${senderId}::uuid) as facts,
        array(select x.id::text from (${acceptedTestDevices(orgId, sql`${senderId}::uuid`)} and c.id = any(${contactIds}::uuid[])) x) as test_devices`.execute(
      db,
    )
  ).rows[0]!;
  return { facts: row.facts, testDevices: new Set(row.test_devices) };
}

/**
 * The program a sender (`alias`) sends under: the program it is attached to (ACTIVE attachment), else the program its
 * own brand registration created (`ps` null: detached, or never attached); none when neither. ARCHIVED programs
 * carry no traffic. Joined as `p` (the program) and `ps` (the sender's attachment).
 */
function senderProgramFrom(orgId: string, alias: string): RawBuilder<unknown> {
  const id = sql.ref(`${alias}.id`);
  return sql`from programs p
    left join program_senders ps on ps.organization_id = p.organization_id and ps.program_id = p.id and ps.sender_id = ${id} and ps.status = 'ACTIVE'
    where p.organization_id = ${orgId}::uuid and p.status <> 'ARCHIVED' and (ps.id is not null or p.sender_id = ${id})
    order by (ps.id is not null) desc, p.created_at limit 1`;
}

/**
 * The program a sender (`alias`) sends under (senderProgramFrom), with what the readiness rule needs
 * (src/domain/programs/readiness.ts `ProgramState`) and the sender's role; null when none.
 */
function senderProgramSql(orgId: string, alias: string): RawBuilder<unknown> {
  return sql`(select json_build_object(
      'role', ps.role,
      'state', json_build_object(
        'status', p.status,
        'channels', p.channels,
        'registrationSenderId', p.sender_id,
        'brand', (select json_build_object('status', b.status, 'rejectionReasons', b.rejection_reasons)
                  from brand_registrations b where b.organization_id = ${orgId}::uuid and b.id = p.brand_registration_id),
        'campaign', (select json_build_object('status', c.status, 'rejectionReasons', c.rejection_reasons)
                     from campaign_registrations c where c.organization_id = ${orgId}::uuid and c.id = p.campaign_registration_id),
        'attached', (select coalesce(json_agg(json_build_object('senderId', a.sender_id, 'role', a.role, 'status', x.status, 'type', x.type,
                       'rcsAgentPhase', x.rcs_agent_phase,
                       'enabledProtocols', (select coalesce(json_agg(pp.type), '[]'::json) from sender_protocols pp
                                            where pp.organization_id = a.organization_id and pp.sender_id = a.sender_id and pp.status in ('ACTIVE', 'PENDING')))), '[]'::json)
                     from program_senders a join sender_ids x on x.organization_id = a.organization_id and x.id = a.sender_id
                     where a.organization_id = ${orgId}::uuid and a.program_id = p.id and a.status = 'ACTIVE')))
    ${senderProgramFrom(orgId, alias)})`;
}

/** A sender's (`alias`) protocol rows, as JSON. */
const protocolsSql = (orgId: string, alias: string) =>
  sql`(select coalesce(json_agg(json_build_object('type', p.type, 'status', p.status, 'config', p.config)), '[]'::json)
          from sender_protocols p where p.organization_id = ${orgId}::uuid and p.sender_id = ${sql.ref(`${alias}.id`)})`;

/**
 * The sender (`s`) that carries `s`'s SMS/MMS fallback when `s` cannot (sending-rule.ts fallbackCarrier): its ACTIVE
 * RCS protocol's `fallbackSenderIdId`, else the oldest ACTIVE FALLBACK-role sender of the program `s` sends under.
 * Any status: the rule refuses one that may not send, naming it.
 */
function fallbackSenderSql(orgId: string): RawBuilder<unknown> {
  return sql`select x.* from sender_ids x where x.organization_id = ${orgId}::uuid and x.id = coalesce(
      (select (p.config->>'fallbackSenderIdId')::uuid from sender_protocols p
        where p.organization_id = ${orgId}::uuid and p.sender_id = s.id and p.type = 'RCS' and p.status = 'ACTIVE'),
      (select a.sender_id from program_senders a
        where a.organization_id = ${orgId}::uuid and a.role = 'FALLBACK' and a.status = 'ACTIVE' and a.sender_id <> s.id
          and a.program_id = (select p.id ${senderProgramFrom(orgId, 's')})
        order by a.attached_at, a.sender_id limit 1))`;
}
