// A sender's protocols (SMS, MMS, RCS, CHATAPP): list, enable with a per-protocol config, update only the keys
// sent, disable. The rules are the document's (openapi/schemas/sender-id-protocols.yaml, `SenderProtocolConfig`):
// - a sender type carries only its protocols (SUPPORTED_PROTOCOLS; another answers 422 UNPROCESSABLE);
// - a config key applies to some protocols only (CONFIG_KEYS; another answers 400 naming `body.config.<key>`);
// - defaults (CONFIG_DEFAULTS) are applied here on enable, never by request validation, so a PATCH of one key
//   keeps the others.
// The simulator provisions at once: an enabled protocol is ACTIVE. A FAILED one (a real provider's answer) is
// provisioned again on update (PENDING).
// What the rows mean for sending (which channels are open, what the settings do, where an RCS agent's fallback
// goes) is the sending rule's alone: src/domain/sender-ids/sending-rule.ts.
import type { components } from '../../../generated/api.d.ts';
import { inTransaction } from '../../db/database.ts';
import * as q from '../../db/queries/sender-ids/protocols.ts';
import { getSender, type SenderRow } from '../../db/queries/sender-ids/senders.ts';
import { badRequest, bodyField, conflict, found, unknownReference, unprocessable } from '../errors.ts';
import type { Tenant } from '../tenant.ts';
import { DEFAULT_VALIDITY_PERIOD_SECONDS } from './sending-rule.ts';
import type { TenantDb } from '../../db/tenant.ts';

export type ProtocolType = components['schemas']['SenderProtocolType'];
export type ProtocolConfig = components['schemas']['SenderProtocolConfig'];
type ConfigKey = keyof ProtocolConfig;
export type SenderProtocolRow = q.SenderProtocolRow;

/** Protocols each sender type can carry (`SenderProtocolType`). */
export const SUPPORTED_PROTOCOLS: Readonly<Record<string, readonly ProtocolType[]>> = {
  LONG_CODE: ['SMS', 'MMS'],
  TOLL_FREE: ['SMS', 'MMS'],
  SHORT_CODE: ['SMS', 'MMS'],
  ALPHANUMERIC: ['SMS'],
  RCS_AGENT: ['RCS'],
  CHATAPP_BUSINESS: ['CHATAPP'],
};

/** Config keys that apply to each protocol (each key's description in `SenderProtocolConfig`). */
const CONFIG_KEYS: Readonly<Record<ProtocolType, readonly ConfigKey[]>> = {
  SMS: ['smartEncoding', 'validityPeriodSeconds'],
  MMS: ['mmsTranscoding', 'validityPeriodSeconds'],
  RCS: ['validityPeriodSeconds', 'fallbackToSms', 'fallbackSenderIdId'],
  CHATAPP: [],
};

const CONFIG_DEFAULTS: Required<ProtocolConfig> = {
  smartEncoding: true,
  mmsTranscoding: true,
  validityPeriodSeconds: DEFAULT_VALIDITY_PERIOD_SECONDS,
  fallbackToSms: true,
  fallbackSenderIdId: null,
};

/** Sender types an RCS protocol may name as `fallbackSenderIdId`. */
const FALLBACK_SENDER_TYPES = new Set(['LONG_CODE', 'TOLL_FREE', 'SHORT_CODE']);

/** Every protocol of the sender, DISABLED ones included. 404 for a sender not of the organization. */
export async function listProtocols(tenant: Tenant, senderId: string): Promise<SenderProtocolRow[]> {
  found(await getSender(tenant.db, tenant.organizationId, senderId), 'Sender ID');
  return q.listSenderProtocols(tenant.db, tenant.organizationId, senderId);
}

export function enableProtocol(
  tenant: Tenant,
  senderId: string,
  body: { type: ProtocolType; config?: ProtocolConfig },
  now = new Date(),
): Promise<SenderProtocolRow> {
  return inTransaction(tenant.db, async (db) => {
    const { organizationId } = tenant;
    const sender = await lockedSender(db, organizationId, senderId);
    const supported = SUPPORTED_PROTOCOLS[sender.type] ?? [];
    if (!supported.includes(body.type)) {
      throw unprocessable(
        'UNPROCESSABLE',
        `A ${sender.type} sender cannot carry ${body.type}; it supports ${supported.join(', ') || 'no protocol'}.`,
      );
    }
    const sent = body.config ?? {};
    assertKeysApply(body.type, sent);
    const existing = await q.getSenderProtocol(db, organizationId, senderId, body.type, { forUpdate: true });
    if (existing && existing.status !== 'DISABLED') {
      throw conflict('ALREADY_EXISTS', `${body.type} is already enabled on this sender (${existing.status}); change it with PATCH.`);
    }
    await assertFallbackSender(db, organizationId, sender, sent);
    const config: ProtocolConfig = {};
    for (const key of CONFIG_KEYS[body.type]) Object.assign(config, { [key]: sent[key] !== undefined ? sent[key] : CONFIG_DEFAULTS[key] });
    return q.upsertSenderProtocol(db, organizationId, { senderId, type: body.type, status: 'ACTIVE', config, statusReason: null, now });
  });
}

/** Changes the keys sent; the others keep their value. A FAILED protocol is provisioned again (PENDING). */
export function updateProtocol(
  tenant: Tenant,
  senderId: string,
  type: ProtocolType,
  body: { config: ProtocolConfig },
  now = new Date(),
): Promise<SenderProtocolRow> {
  return inTransaction(tenant.db, async (db) => {
    const { organizationId } = tenant;
    const sender = await lockedSender(db, organizationId, senderId);
    const existing = found(await q.getSenderProtocol(db, organizationId, senderId, type, { forUpdate: true }), 'Sender protocol');
    if (existing.status === 'DISABLED')
      throw conflict('INVALID_STATE', `${type} is DISABLED on this sender; enable it again with POST /v1/sender-ids/{id}/protocols.`);
    assertKeysApply(type, body.config);
    await assertFallbackSender(db, organizationId, sender, body.config);
    const config: ProtocolConfig = { ...existing.config };
    for (const [key, value] of Object.entries(body.config)) if (value !== undefined) Object.assign(config, { [key]: value });
    const reprovision = existing.status === 'FAILED';
    const row = await q.updateSenderProtocol(db, organizationId, senderId, type, {
      config,
      ...(reprovision ? { status: 'PENDING', statusReason: null } : {}),
      now,
    });
    return found(row, 'Sender protocol'); // locked above: always found
  });
}

/** DISABLED, config kept; idempotent. The last ACTIVE protocol going makes the sender not send-ready. */
export function disableProtocol(tenant: Tenant, senderId: string, type: ProtocolType, now = new Date()): Promise<SenderProtocolRow> {
  return inTransaction(tenant.db, async (db) => {
    const { organizationId } = tenant;
    await lockedSender(db, organizationId, senderId, { allowDeactivated: true });
    const existing = found(await q.getSenderProtocol(db, organizationId, senderId, type, { forUpdate: true }), 'Sender protocol');
    if (existing.status === 'DISABLED') return existing;
    const row = found(
      await q.updateSenderProtocol(db, organizationId, senderId, type, { status: 'DISABLED', statusReason: null, now }),
      'Sender protocol',
    );
    await q.clearSendReadyWithoutActiveProtocol(db, organizationId, senderId, now);
    return row;
  });
}

async function lockedSender(
  db: TenantDb,
  organizationId: string,
  senderId: string,
  opts: { allowDeactivated?: boolean } = {},
): Promise<SenderRow> {
  const sender = found(await getSender(db, organizationId, senderId, { forUpdate: true }), 'Sender ID');
  if (!opts.allowDeactivated && sender.status === 'DEACTIVATED') throw conflict('INVALID_STATE', 'The sender ID is DEACTIVATED.');
  return sender;
}

/** 400 naming every sent key that does not apply to the protocol. */
function assertKeysApply(type: ProtocolType, config: ProtocolConfig): void {
  const applies = new Set<string>(CONFIG_KEYS[type]);
  const wrong = Object.keys(config).filter((k) => !applies.has(k));
  if (wrong.length > 0) {
    throw badRequest(
      `Config key${wrong.length > 1 ? 's' : ''} ${wrong.join(', ')} do${wrong.length > 1 ? '' : 'es'} not apply to ${type}.`,
      wrong.map((k) => ({ field: bodyField('config', k), message: `does not apply to protocol ${type}` })),
    );
  }
}

/** `fallbackSenderIdId`: a same-organization number or short-code sender (404 naming it when unknown, else 422). */
async function assertFallbackSender(db: TenantDb, organizationId: string, sender: SenderRow, config: ProtocolConfig): Promise<void> {
  const id = config.fallbackSenderIdId;
  if (id === undefined || id === null) return;
  const field = bodyField('config', 'fallbackSenderIdId');
  const fallback = await getSender(db, organizationId, id);
  if (!fallback) throw unknownReference(field, 'sender ID');
  if (fallback.id === sender.id || !FALLBACK_SENDER_TYPES.has(fallback.type) || fallback.status === 'DEACTIVATED') {
    throw unprocessable(
      'UNPROCESSABLE',
      `fallbackSenderIdId must name another LONG_CODE, TOLL_FREE or SHORT_CODE sender that is not DEACTIVATED (${fallback.type}, ${fallback.status}).`,
    );
  }
}
