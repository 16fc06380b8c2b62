// Sender IDs core: list, create, get, update, delete and the lifecycle actions (activate, suspend, reactivate).
// The lifecycle is the table in transitions.ts; this module applies it under a row lock and writes the
// timestamps and reasons each move sets. Another organization's id is 404 everywhere (getSender is tenant-scoped).
import { throughputOf } from './sending-rule.ts';
import * as programsQ from '../../db/queries/programs/programs.ts';
import { inTransaction } from '../../db/database.ts';
import type { Page } from '../../db/paging.ts';
import * as protocolsQ from '../../db/queries/sender-ids/protocols.ts';
import * as q from '../../db/queries/sender-ids/senders.ts';
import { ApiError, found, invalidField, unprocessable } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import type { SenderWithProtocols } from './mappers.ts';
import { disableForwarding } from './voice-forwarding.ts';
import { decide, EDITABLE, isSenderStatus, type SenderAction } from './transitions.ts';
import { syncProgramStatuses } from '../programs/programs.ts';
import type { SenderIdProvider } from '../../db/tables/enums.ts';
import type { TenantDb } from '../../db/tenant.ts';

export type { SenderWithProtocols };

type SenderType = 'LONG_CODE' | 'TOLL_FREE' | 'SHORT_CODE' | 'ALPHANUMERIC' | 'RCS_AGENT' | 'CHATAPP_BUSINESS';

/** Per type: whether `address` is given by the customer (create and PATCH), and whether the sender is tied to one country. */
const TYPE_RULES: Record<SenderType, { address: boolean; country: boolean }> = {
  LONG_CODE: { address: false, country: true },
  TOLL_FREE: { address: false, country: true },
  SHORT_CODE: { address: true, country: true },
  ALPHANUMERIC: { address: true, country: true },
  RCS_AGENT: { address: false, country: false },
  CHATAPP_BUSINESS: { address: true, country: false },
};

/** Countries that do not allow alphanumeric sender names (422). */
const NO_ALPHANUMERIC_COUNTRIES: ReadonlySet<string> = new Set(['US', 'CA']);

const ADDRESS_RULES: Partial<Record<SenderType, { re: RegExp; message: string }>> = {
  SHORT_CODE: { re: /^\d{5,6}$/, message: 'a SHORT_CODE address is 5 or 6 digits' },
  ALPHANUMERIC: {
    re: /^(?=.*[A-Za-z])[A-Za-z0-9 ]{1,11}$/,
    message: 'an ALPHANUMERIC address is 1–11 characters of A–Z, a–z, 0–9 and spaces with at least one letter',
  },
  CHATAPP_BUSINESS: { re: /^\+[1-9]\d{6,14}$/, message: 'a CHATAPP_BUSINESS address is an E.164 number' },
};

/** 409 INVALID_STATE naming the sender's current status in the message and in `details` (field, code `invalid_state`). */
export function invalidState(status: string, message: string, field = 'path.id'): ApiError {
  return new ApiError(409, 'INVALID_STATE', `${message} (the sender ID is ${status}).`, {
    details: [{ field, message: `the sender ID is ${status}`, code: 'invalid_state' }],
  });
}

async function withProtocols(db: TenantDb, organizationId: string, rows: q.SenderRow[]): Promise<SenderWithProtocols[]> {
  const protocols = await protocolsQ.listProtocolsOfSenders(
    db,
    organizationId,
    rows.map((r) => r.id),
  );
  // RCS agent details (channels work, migration 0016): loaded for RCS_AGENT senders only.
  const agents = await q.listRcsAgentProfiles(
    db,
    organizationId,
    rows.filter((r) => r.type === 'RCS_AGENT').map((r) => r.id),
  );
  return rows.map((row) => ({
    row,
    protocols: protocols.filter((p) => p.sender_id === row.id),
    rcsAgent: agents.find((a) => a.sender_id === row.id) ?? null,
  }));
}

async function one(db: TenantDb, organizationId: string, row: q.SenderRow): Promise<SenderWithProtocols> {
  return (await withProtocols(db, organizationId, [row]))[0]!;
}

export async function listSenderIds(
  tenant: Tenant,
  filters: q.SenderFilters,
  page: { limit: number; offset: number },
): Promise<Page<SenderWithProtocols>> {
  const { rows, total } = await q.listSenders(tenant.db, tenant.organizationId, filters, page);
  return { rows: await withProtocols(tenant.db, tenant.organizationId, rows), total };
}

export async function getSenderId(tenant: Tenant, id: string): Promise<SenderWithProtocols> {
  return one(tenant.db, tenant.organizationId, found(await q.getSender(tenant.db, tenant.organizationId, id), 'Sender ID'));
}

type RegistrationFields = { provider?: SenderIdProvider; address?: string; countryCode?: string };

/** The per-type rules of `CreateSenderIdBody` for the fields given; 400 naming the field, 422 for a country without alphanumeric senders. */
function checkTypeRules(type: SenderType, fields: RegistrationFields, creating: boolean): void {
  const rules = TYPE_RULES[type];
  if (fields.address !== undefined) {
    if (!rules.address)
      throw invalidField(
        'body.address',
        `omit address for a ${type} sender (it is assigned by a number purchase, an import or the provider)`,
      );
    const rule = ADDRESS_RULES[type];
    if (rule && !rule.re.test(fields.address)) throw invalidField('body.address', rule.message);
  } else if (creating && rules.address) {
    throw invalidField('body.address', `address is required for a ${type} sender`);
  }
  if (fields.countryCode !== undefined && !rules.country) {
    throw invalidField('body.countryCode', `a ${type} sender is not tied to one country; omit countryCode`);
  }
  if (type === 'ALPHANUMERIC') {
    if (creating && fields.countryCode === undefined)
      throw invalidField('body.countryCode', 'countryCode is required for an ALPHANUMERIC sender');
  }
}

function checkAlphanumericCountry(type: string, countryCode: string | null): void {
  if (type === 'ALPHANUMERIC' && countryCode && NO_ALPHANUMERIC_COUNTRIES.has(countryCode)) {
    throw unprocessable('UNPROCESSABLE', `Alphanumeric sender IDs are not allowed in ${countryCode}.`);
  }
}

export async function createSenderId(
  tenant: Tenant,
  body: { type: SenderType; name: string; provider?: SenderIdProvider; address?: string; countryCode?: string; rcsAgent?: RcsAgentInput },
): Promise<SenderWithProtocols> {
  checkTypeRules(body.type, body, true);
  checkAlphanumericCountry(body.type, body.countryCode ?? null);
  checkRcsAgentTaken(body.type, body.rcsAgent);
  return inTransaction(tenant.db, async (tx) => {
    const db: TenantDb = tx;
    const row = await q.insertSender(db, tenant.organizationId, {
      name: body.name,
      type: body.type,
      status: 'DRAFT',
      provider: body.provider ?? null,
      phone_number: null,
      address: body.address ?? null,
      country_code: body.countryCode ?? null,
      is_sandbox: false,
      send_ready: false,
      rcs_agent_phase: body.type === 'RCS_AGENT' ? 'TESTING' : null,
      // A new sender has no registration yet: its type's starting class (sending-rule.ts).
      throughput_per_second: throughputOf({
        type: body.type,
        status: 'DRAFT',
        countryCode: body.countryCode ?? null,
        isSandbox: false,
        campaignRegistered: false,
        vettingScore: null,
      }),
      updated_at: new Date(),
    });
    const rcsAgent = body.rcsAgent
      ? await q.upsertRcsAgentProfile(db, tenant.organizationId, row.id, rcsAgentFields(body.rcsAgent, null))
      : null;
    return { row, protocols: [], rcsAgent };
  });
}

export async function updateSenderId(
  tenant: Tenant,
  id: string,
  body: { name?: string; rcsAgent?: RcsAgentPatch } & RegistrationFields,
): Promise<SenderWithProtocols> {
  return inTransaction(tenant.db, async (tx) => {
    const db: TenantDb = tx;
    const current = found(await q.getSender(db, tenant.organizationId, id, { forUpdate: true }), 'Sender ID');
    const editable = isSenderStatus(current.status) ? EDITABLE[current.status] : { name: false, registration: false };
    const type = current.type as SenderType;
    if (!editable.name) throw invalidState(current.status, 'A DEACTIVATED sender ID cannot be changed');
    for (const field of ['provider', 'address', 'countryCode'] as const) {
      if (body[field] === undefined) continue;
      if (!editable.registration) {
        throw invalidState(current.status, `\`${field}\` can change only while the sender ID is DRAFT or REJECTED`, `body.${field}`);
      }
      const takes = field === 'provider' || (field === 'address' ? TYPE_RULES[type].address : TYPE_RULES[type].country);
      if (!takes) throw invalidState(current.status, `A ${type} sender ID does not take \`${field}\``, `body.${field}`);
    }
    checkTypeRules(type, body, false);
    checkAlphanumericCountry(type, body.countryCode ?? current.country_code);
    if (body.rcsAgent !== undefined) {
      checkRcsAgentTaken(type, body.rcsAgent);
      const stored = await q.getRcsAgentProfile(db, tenant.organizationId, id);
      await q.upsertRcsAgentProfile(db, tenant.organizationId, id, rcsAgentFields(body.rcsAgent, stored ?? null));
    }
    const row = await q.updateSender(db, tenant.organizationId, id, {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.provider !== undefined ? { provider: body.provider } : {}),
      ...(body.address !== undefined ? { address: body.address } : {}),
      ...(body.countryCode !== undefined ? { country_code: body.countryCode } : {}),
    });
    return one(db, tenant.organizationId, found(row, 'Sender ID'));
  });
}

// --- RCS agent details (channels work, migration 0016): `rcsAgent` on create and update, stored once per sender
// (rcs_agent_profiles) and written the same way by the deprecated createRcsSender (channels.ts). ---
export type RcsAgentInput = { displayName: string; description?: string; brandColor?: string; logoUrl?: string };
export type RcsAgentPatch = { displayName?: string; description?: string | null; brandColor?: string | null; logoUrl?: string | null };

/** `rcsAgent` is taken by an RCS_AGENT only (400 naming it). */
function checkRcsAgentTaken(type: SenderType, rcsAgent: unknown): void {
  if (rcsAgent !== undefined && type !== 'RCS_AGENT')
    throw invalidField('body.rcsAgent', `a ${type} sender has no RCS agent details; omit rcsAgent`);
}

/** The stored details after `patch` (keys sent change, null clears); 400 when an agent without details gets no displayName. */
function rcsAgentFields(patch: RcsAgentPatch, stored: q.RcsAgentProfileFields | null): q.RcsAgentProfileFields {
  const displayName = patch.displayName ?? stored?.display_name;
  if (displayName === undefined)
    throw invalidField('body.rcsAgent.displayName', 'displayName is required while the agent has no details yet');
  const pick = (sent: string | null | undefined, kept: string | null | undefined): string | null =>
    sent !== undefined ? sent : (kept ?? null);
  return {
    display_name: displayName,
    description: pick(patch.description, stored?.description),
    brand_color: pick(patch.brandColor, stored?.brand_color),
    logo_url: pick(patch.logoUrl, stored?.logo_url),
  };
}

// --- end RCS agent details ---

const STATUS_REASON = {
  SUSPENDED: 'Suspended by the customer.',
  DEACTIVATED: 'Deleted by API request.',
} as const;

/**
 * Applies one lifecycle action through the transition table (transitions.ts); 409 INVALID_STATE when it refuses.
 * Deactivation (delete) also turns voice forwarding off (synced to the provider first: 502 and nothing changed
 * when it refuses), disables the sender's protocols and ends its program attachments, in the same transaction.
 */
export async function transitionSenderId(
  tenant: Tenant,
  services: Services,
  id: string,
  action: SenderAction,
  now = new Date(),
): Promise<SenderWithProtocols> {
  return inTransaction(tenant.db, async (tx) => {
    const db: TenantDb = tx;
    const current = found(await q.getSender(db, tenant.organizationId, id, { forUpdate: true }), 'Sender ID');
    const decision = decide({ status: current.status, sendReady: current.send_ready, suspendedBy: current.suspended_by }, action);
    if (!decision.ok) {
      const why =
        current.status === 'PENDING' && action === 'activate' && current.status_reason
          ? `${decision.reason}: ${current.status_reason}`
          : decision.reason;
      throw invalidState(current.status, `Cannot ${action} the sender ID: ${why}`);
    }
    if (decision.to === null) return one(db, tenant.organizationId, current);
    // Its programs follow their readiness once it has moved (a suspended or deleted PRIMARY: DRAFT).
    const programIds = (await programsQ.activeAttachmentsOfSender(db, tenant.organizationId, id)).map((a) => a.program_id);
    if (decision.to === 'DEACTIVATED') {
      await disableForwarding({ ...tenant, db: tx as unknown as Tenant['db'] }, services, id);
      for (const p of await protocolsQ.listSenderProtocols(db, tenant.organizationId, id)) {
        if (p.status !== 'DISABLED') {
          await protocolsQ.updateSenderProtocol(db, tenant.organizationId, id, p.type, {
            status: 'DISABLED',
            statusReason: 'The sender ID was deleted.',
            now,
          });
        }
      }
      await programsQ.detachSenderFromAllPrograms(db, tenant.organizationId, id, now); // ended, never deleted
    }
    const patch: q.SenderPatch =
      decision.to === 'ACTIVE'
        ? { status: 'ACTIVE', activated_at: now, status_reason: null, suspended_by: null, suspended_at: null }
        : decision.to === 'SUSPENDED'
          ? { status: 'SUSPENDED', suspended_by: 'CUSTOMER', suspended_at: now, status_reason: STATUS_REASON.SUSPENDED }
          : {
              status: 'DEACTIVATED',
              deactivated_at: now,
              send_ready: false,
              suspended_by: null,
              suspended_at: null,
              status_reason: STATUS_REASON.DEACTIVATED,
            };
    const row = found(await q.updateSender(db, tenant.organizationId, id, patch), 'Sender ID');
    await syncProgramStatuses(db, tenant.organizationId, programIds);
    return one(db, tenant.organizationId, row);
  });
}
