// The deprecated /v1/channels view over sender IDs (openapi/paths/v1/channels*, sunset 2026-09-01).
// No second store of senders: a channel is a named binding of one sender ID to one message channel
// (sender_channels), an RCS sender a named binding of an RCS_AGENT sender ID under an RCS channel
// (rcs_channel_senders). Sender writes go through senders.ts (createRcsSender creates the RCS_AGENT with its
// agent details exactly as POST /v1/sender-ids with `rcsAgent` does); health comes from the provider.
// Every answer of these operations, errors included, carries the deprecation headers (src/contract/deprecations.ts,
// applied by the HTTP layer).
import type { components } from '../../../generated/api.d.ts';
import { inTransaction } from '../../db/database.ts';
import * as q from '../../db/queries/sender-ids/channels.ts';
import { getRcsAgentProfile, getSender, listRcsAgentProfiles, type SenderRow } from '../../db/queries/sender-ids/senders.ts';
import { ProviderError, type RcsTesterInvite } from '../../providers/provider.ts';
import { ApiError, conflict, found, invalidField, unknownReference, unprocessable } from '../errors.ts';
import { parsePhone } from '../phone.ts';
import { providerOperation } from '../providers.ts';
import type { Services, Tenant } from '../tenant.ts';
import type { ChannelHealthView, RcsSenderView } from './channel-mappers.ts';
import { SUPPORTED_PROTOCOLS } from './protocols.ts';
import { listSenderProtocols } from '../../db/queries/sender-ids/protocols.ts';
import { channelsOf } from './sending-rule.ts';
import { createSenderId, invalidState } from './senders.ts';
import type { TenantDb } from '../../db/tenant.ts';

type ChannelType = components['schemas']['Channel'];

// ---- channels ---------------------------------------------------------------------------------------------------

export type ChannelWithHealth = { channel: q.ChannelRow; health: ChannelHealthView };

export function listChannels(tenant: Tenant): Promise<q.ChannelRow[]> {
  return q.listChannels(tenant.db, tenant.organizationId);
}

export async function getChannel(tenant: Tenant, id: string): Promise<q.ChannelRow> {
  return found(await q.getChannel(tenant.db, tenant.organizationId, id), 'Channel');
}

/** The sender a channel of `type` may bind: of the organization (404 naming the field), not DEACTIVATED, carrying the protocol (422). */
async function bindableSender(db: TenantDb, organizationId: string, senderIdId: string, type: ChannelType): Promise<SenderRow> {
  const sender = await getSender(db, organizationId, senderIdId, { forUpdate: true });
  if (!sender) throw unknownReference('body.senderIdId', 'sender ID');
  if (sender.status === 'DEACTIVATED')
    throw unprocessable('UNPROCESSABLE', 'The sender ID is DEACTIVATED; a channel needs a sender ID that can send.');
  const supported = SUPPORTED_PROTOCOLS[sender.type] ?? [];
  const available = channelsOf(sender, await listSenderProtocols(db, organizationId, sender.id)); // the send path's rule
  if (!supported.includes(type) || !available(type)) {
    throw unprocessable(
      'UNPROCESSABLE',
      `A ${type} channel needs a sender ID carrying ${type} (RCS: RCS_AGENT; SMS/MMS: a number or short code; CHATAPP: CHATAPP_BUSINESS); this ${sender.type} sender ${supported.includes(type) ? `has ${type} disabled` : `carries ${supported.join(', ') || 'no protocol'}`}.`,
    );
  }
  return sender;
}

export async function createChannel(
  tenant: Tenant,
  services: Services,
  body: { type: ChannelType; name: string; senderIdId: string },
): Promise<ChannelWithHealth> {
  const { channel, sender } = await inTransaction(tenant.db, async (db) => {
    const bound = await bindableSender(db, tenant.organizationId, body.senderIdId, body.type);
    return {
      sender: bound,
      channel: await q.insertChannel(db, tenant.organizationId, { sender_id: bound.id, type: body.type, name: body.name }),
    };
  });
  return { channel, health: await checkHealth(tenant, services, channel, sender) };
}

export async function replaceChannel(
  tenant: Tenant,
  services: Services,
  id: string,
  body: { name: string; senderIdId: string },
): Promise<ChannelWithHealth> {
  const { channel, sender } = await inTransaction(tenant.db, async (db) => {
    const current = found(await q.getChannel(db, tenant.organizationId, id, { forUpdate: true }), 'Channel');
    const bound = await bindableSender(db, tenant.organizationId, body.senderIdId, current.type as ChannelType);
    const updated = found(await q.updateChannel(db, tenant.organizationId, id, { sender_id: bound.id, name: body.name }), 'Channel');
    return { channel: updated, sender: bound };
  });
  return { channel, health: await checkHealth(tenant, services, channel, sender) };
}

/** Deletes the channel and its RCS sender bindings; the sender IDs stay as they are. */
export async function deleteChannel(tenant: Tenant, id: string): Promise<{ id: string }> {
  if (!(await q.deleteChannel(tenant.db, tenant.organizationId, id))) throw found(undefined, 'Channel');
  return { id };
}

export async function testChannel(tenant: Tenant, services: Services, id: string): Promise<ChannelHealthView> {
  const channel = await getChannel(tenant, id);
  const sender = found(await getSender(tenant.db, tenant.organizationId, channel.sender_id), 'Channel');
  return checkHealth(tenant, services, channel, sender);
}

/**
 * The channel's health: the provider's own checks (credentials; DEGRADED when it reports warnings, UNKNOWN when it
 * does not answer), then the sender as this service knows it (`sender_status`: ACTIVE and send-ready) and the
 * channel's protocol on it (`protocol`). Any failed check is DOWN. Never an error.
 */
async function checkHealth(
  tenant: Tenant,
  services: Services,
  channel: q.ChannelRow,
  sender: SenderRow,
  now = new Date(),
): Promise<ChannelHealthView> {
  const type = channel.type as ChannelType;
  const checks: ChannelHealthView['checks'] = [];
  let latencyMs: number | null = null;
  let degraded = false;
  let unreachable: string | null = null;
  const provider = services.providers.forSender(sender);
  if (!provider.checkSenderHealth) {
    // No live check at this provider: only this service's own checks run, and the answer says so (degraded).
    degraded = true;
    checks.push({
      name: 'live_check',
      ok: true,
      message: `${provider.name} offers no live sender check; the credentials were not tested.`,
    });
  } else {
    try {
      const report = await provider.checkSenderHealth({
        organizationId: tenant.organizationId,
        senderId: sender.id,
        name: sender.name,
        address: sender.phone_number ?? sender.address,
        type: sender.type,
        channel: type,
      });
      latencyMs = report.latencyMs;
      degraded = report.degraded;
      checks.push(...report.checks);
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      unreachable = 'The provider did not answer the health check.';
      checks.push({ name: 'credentials', ok: false, message: unreachable });
    }
  }
  const senderOk = sender.status === 'ACTIVE' && sender.send_ready;
  checks.push({
    name: 'sender_status',
    ok: senderOk,
    message: senderOk ? null : sender.status !== 'ACTIVE' ? `The sender ID is ${sender.status}.` : 'The sender ID is not send-ready.',
  });
  const available = channelsOf(sender, await listSenderProtocols(tenant.db, tenant.organizationId, sender.id)); // the send path's rule
  const protocolOk = (SUPPORTED_PROTOCOLS[sender.type] ?? []).includes(type) && available(type);
  checks.push({ name: 'protocol', ok: protocolOk, message: protocolOk ? null : `${type} is not active on the sender ID.` });
  const failed = checks.find((c) => !c.ok);
  const status: ChannelHealthView['status'] = unreachable ? 'UNKNOWN' : failed ? 'DOWN' : degraded ? 'DEGRADED' : 'HEALTHY';
  const message = unreachable ?? failed?.message ?? (degraded ? `The provider answered slowly (${latencyMs} ms).` : null);
  return { channelId: channel.id, status, checkedAt: now.toISOString(), latencyMs, message: message ?? null, checks };
}

// ---- RCS senders and their test devices --------------------------------------------------------------------------

async function rcsViews(db: TenantDb, organizationId: string, bindings: q.RcsChannelSenderRow[]): Promise<RcsSenderView[]> {
  const senderIds = bindings.map((b) => b.sender_id);
  const [profiles, counts, senders] = await Promise.all([
    listRcsAgentProfiles(db, organizationId, senderIds),
    q.countRcsTestDevices(db, organizationId, senderIds),
    Promise.all(senderIds.map((id) => getSender(db, organizationId, id))),
  ]);
  return bindings.flatMap((binding, i) => {
    const sender = senders[i];
    if (!sender) return [];
    return [
      { binding, sender, profile: profiles.find((p) => p.sender_id === sender.id) ?? null, testDeviceCount: counts.get(sender.id) ?? 0 },
    ];
  });
}

async function rcsBinding(db: TenantDb, organizationId: string, channelId: string, senderName: string): Promise<q.RcsChannelSenderRow> {
  found(await q.getChannel(db, organizationId, channelId), 'Channel');
  return found(await q.getRcsChannelSender(db, organizationId, channelId, senderName), 'RCS sender');
}

export async function listRcsSenders(tenant: Tenant, channelId: string): Promise<RcsSenderView[]> {
  await getChannel(tenant, channelId);
  return rcsViews(tenant.db, tenant.organizationId, await q.listRcsChannelSenders(tenant.db, tenant.organizationId, channelId));
}

export async function getRcsSender(
  tenant: Tenant,
  channelId: string,
  senderName: string,
): Promise<RcsSenderView & { devices: q.RcsTestDeviceRow[] }> {
  const binding = await rcsBinding(tenant.db, tenant.organizationId, channelId, senderName);
  const [view] = await rcsViews(tenant.db, tenant.organizationId, [binding]);
  const devices = await q.listRcsTestDevices(tenant.db, tenant.organizationId, binding.sender_id);
  return { ...found(view, 'RCS sender'), devices };
}

/**
 * A new RCS_AGENT sender ID (through createSenderId, with its agent details as `rcsAgent`) bound under the RCS
 * channel by `senderName`: 422 for a channel that is not RCS, 409 ALREADY_EXISTS for a name taken in the channel.
 */
export async function createRcsSender(
  tenant: Tenant,
  channelId: string,
  body: { senderName: string; displayName: string; description?: string; brandColor?: string; logoUrl?: string },
): Promise<RcsSenderView> {
  return inTransaction(tenant.db, async (tx) => {
    const db: TenantDb = tx;
    const { organizationId } = tenant;
    const channel = found(await q.getChannel(db, organizationId, channelId, { forUpdate: true }), 'Channel');
    if (channel.type !== 'RCS')
      throw unprocessable('UNPROCESSABLE', `RCS senders belong under an RCS channel; this channel is ${channel.type}.`);
    const taken = () => conflict('ALREADY_EXISTS', `An RCS sender named ${body.senderName} already exists in this channel.`);
    if (await q.getRcsChannelSender(db, organizationId, channelId, body.senderName)) throw taken();
    const channelSender = await getSender(db, organizationId, channel.sender_id);
    const created = await createSenderId(
      { ...tenant, db: tx as unknown as Tenant['db'] },
      {
        type: 'RCS_AGENT',
        name: body.displayName,
        ...(channelSender?.provider ? { provider: channelSender.provider } : {}),
        rcsAgent: {
          displayName: body.displayName,
          ...(body.description !== undefined ? { description: body.description } : {}),
          ...(body.brandColor !== undefined ? { brandColor: body.brandColor } : {}),
          ...(body.logoUrl !== undefined ? { logoUrl: body.logoUrl } : {}),
        },
      },
    );
    const binding = await q.insertRcsChannelSender(db, organizationId, {
      channel_id: channelId,
      sender_id: created.row.id,
      sender_name: body.senderName,
    });
    if (!binding) throw taken();
    const profile = await getRcsAgentProfile(db, organizationId, created.row.id);
    return { binding, sender: created.row, profile: profile ?? null, testDeviceCount: 0 };
  });
}

export async function listRcsTestDevices(tenant: Tenant, channelId: string, senderName: string): Promise<q.RcsTestDeviceRow[]> {
  const binding = await rcsBinding(tenant.db, tenant.organizationId, channelId, senderName);
  return q.listRcsTestDevices(tenant.db, tenant.organizationId, binding.sender_id);
}

/**
 * Registers a handset as a tester of the agent: the provider sends the invite (its answer is the device's first
 * status), then it is recorded. 400 INVALID_PHONE, 409 ALREADY_EXISTS for a phone already registered, 409
 * INVALID_STATE for a DEACTIVATED agent.
 */
export async function addRcsTestDevice(
  tenant: Tenant,
  services: Services,
  channelId: string,
  senderName: string,
  body: { phone: string },
  now = new Date(),
): Promise<q.RcsTestDeviceRow> {
  const parsed = parsePhone(body.phone);
  if (!parsed) throw invalidField('body.phone', 'is not a valid phone number for its country', 'INVALID_PHONE');
  const { organizationId } = tenant;
  const binding = await rcsBinding(tenant.db, organizationId, channelId, senderName);
  const sender = found(await getSender(tenant.db, organizationId, binding.sender_id), 'RCS sender');
  if (sender.status === 'DEACTIVATED') throw invalidState(sender.status, 'A DEACTIVATED agent cannot invite testers', 'path.senderName');
  const taken = () => conflict('ALREADY_EXISTS', `${parsed.e164} is already a test device of this RCS sender.`);
  const existing = await q.listRcsTestDevices(tenant.db, organizationId, sender.id);
  if (existing.some((d) => d.phone === parsed.e164)) throw taken();
  const inviteTester = providerOperation(services.providers.forSender(sender), 'inviteRcsTester', 'RCS tester invites', 'path.senderName');
  let invite: RcsTesterInvite;
  try {
    invite = await inviteTester({ organizationId, senderId: sender.id, agentId: sender.address, phone: parsed.e164 });
  } catch (error) {
    if (error instanceof ProviderError)
      throw new ApiError(502, 'UPSTREAM_ERROR', 'The provider could not send the tester invite; retry shortly.');
    throw error;
  }
  const row = await q.insertRcsTestDevice(tenant.db, organizationId, {
    sender_id: sender.id,
    phone: parsed.e164,
    status: invite.status,
    invited_at: now,
    accepted_at: invite.acceptedAt,
  });
  if (!row) throw taken();
  return row;
}
