// Programs: one brand + one campaign registration and the senders attached to send under them.
// How a program comes to exist: registering a brand for a sender (POST /v1/sender-ids/{id}/brand/register)
// creates the sender's program, named after the brand's displayName, with `campaign` null; registering a
// campaign for that sender sets its campaign; registering either again after a rejection points the program at
// the new registration; the brand's sender is attached as PRIMARY. There is no create call. Its status follows
// its readiness both ways, DRAFT <-> ACTIVE (transitions.ts; re-decided after every write that can change it), and
// archiveProgram retires it (ARCHIVED, final). Attachments are ended (DETACHED), never deleted.
import { inTransaction } from '../../db/database.ts';
import type { Page } from '../../db/paging.ts';
import * as q from '../../db/queries/programs/programs.ts';
import * as protocolsQ from '../../db/queries/sender-ids/protocols.ts';
import * as sendersQ from '../../db/queries/sender-ids/senders.ts';
import * as regQ from '../../db/queries/submissions/registrations.ts';
import { ApiError, conflict, found, unprocessable } from '../errors.ts';
import { applyRegistryEvent } from '../submissions/sender-status.ts';
import { refreshThroughput } from '../sender-ids/sending-rule.ts';
import type { Services, Tenant } from '../tenant.ts';
import { evaluateProgram, type Evaluation } from './readiness.ts';
import { decideProgram } from './transitions.ts';
import type { Channel, ProgramSenderRole, ProgramStatus } from '../../db/tables/enums.ts';
import type { TenantDb } from '../../db/tenant.ts';

/** Protocol statuses that count as enabled (DISABLED and FAILED do not). */
const ENABLED = new Set(['ACTIVE', 'PENDING']);

/** The channels a program covers, from the type of the sender it was created for. */
function channelsFor(senderType: string): Channel[] {
  return senderType === 'CHATAPP_BUSINESS' ? ['CHATAPP'] : ['RCS', 'SMS', 'MMS'];
}

export type AttachmentView = { row: q.AttachmentRow; senderLabel: string | null; protocols: string[] };

export type LoadedProgram = {
  row: q.ProgramRow;
  brand: regQ.BrandRow | null;
  campaign: regQ.CampaignRow | null;
  attachments: AttachmentView[];
  evaluation: Evaluation;
};

async function load(db: TenantDb, organizationId: string, rows: q.ProgramRow[]): Promise<LoadedProgram[]> {
  const attachments = await q.attachmentsOf(
    db,
    organizationId,
    rows.map((r) => r.id),
  );
  const senderIds = [...new Set([...attachments.map((a) => a.sender_id), ...rows.map((r) => r.sender_id)])];
  const senders = new Map<string, sendersQ.SenderRow>();
  for (const id of senderIds) {
    const s = await sendersQ.getSender(db, organizationId, id);
    if (s) senders.set(id, s);
  }
  const protocols = await protocolsQ.listProtocolsOfSenders(db, organizationId, senderIds);
  const enabledOf = (senderId: string) => protocols.filter((p) => p.sender_id === senderId && ENABLED.has(p.status)).map((p) => p.type);
  const out: LoadedProgram[] = [];
  for (const row of rows) {
    const brand = row.brand_registration_id ? ((await regQ.getBrand(db, organizationId, row.brand_registration_id)) ?? null) : null;
    const campaign = row.campaign_registration_id
      ? ((await regQ.getCampaign(db, organizationId, row.campaign_registration_id)) ?? null)
      : null;
    const mine = attachments.filter((a) => a.program_id === row.id);
    const views = mine.map((a) => {
      const s = senders.get(a.sender_id);
      return {
        row: a,
        senderLabel: s ? (s.phone_number ?? s.address ?? s.name) : null,
        protocols: enabledOf(a.sender_id).filter((t) => row.channels.includes(t)),
      };
    });
    const evaluation = evaluateProgram({
      status: row.status,
      channels: row.channels,
      brand: brand && { status: brand.status, rejectionReasons: brand.rejection_reasons },
      campaign: campaign && { status: campaign.status, rejectionReasons: campaign.rejection_reasons },
      attached: mine
        .filter((a) => a.status === 'ACTIVE')
        .map((a) => {
          const s = senders.get(a.sender_id);
          return {
            senderId: a.sender_id,
            role: a.role,
            status: s?.status ?? 'DEACTIVATED',
            type: s?.type ?? '',
            rcsAgentPhase: s?.rcs_agent_phase ?? null,
            enabledProtocols: enabledOf(a.sender_id),
          };
        }),
      registrationSenderId: row.sender_id,
    });
    out.push({ row, brand, campaign, attachments: views, evaluation });
  }
  return out;
}

export async function listPrograms(
  tenant: Tenant,
  filter: { status?: ProgramStatus | undefined },
  page: { limit: number; offset: number },
): Promise<Page<LoadedProgram>> {
  const { rows, total } = await q.listPrograms(tenant.db, tenant.organizationId, filter, page);
  return { rows: await load(tenant.db, tenant.organizationId, rows), total };
}

export async function getProgram(tenant: Tenant, id: string): Promise<LoadedProgram> {
  const row = found(await q.getProgram(tenant.db, tenant.organizationId, id), 'Program');
  return (await load(tenant.db, tenant.organizationId, [row]))[0]!;
}

/** Moves the program to the status its readiness calls for (the table in transitions.ts); ARCHIVED stays. */
async function syncProgramStatus(db: TenantDb, organizationId: string, programId: string): Promise<void> {
  const row = await q.getProgram(db, organizationId, programId, { forUpdate: true });
  if (!row) return;
  const [loaded] = await load(db, organizationId, [row]);
  const to = decideProgram(row.status, loaded!.evaluation.readiness.ready ? 'ready' : 'notReady');
  if (to) await q.updateProgram(db, organizationId, programId, { status: to });
}

/**
 * A registration of the sender's program changed (brand or campaign registered, suspended, reinstated, expired,
 * vetted): its attached senders' throughput class and the program's status follow.
 */
export async function programRegistrationChanged(db: TenantDb, organizationId: string, senderId: string): Promise<void> {
  const program = await q.programOfSender(db, organizationId, senderId);
  if (!program) return;
  const attached = (await q.attachmentsOf(db, organizationId, [program.id])).filter((a) => a.status === 'ACTIVE');
  for (const a of attached) {
    const sender = await sendersQ.getSender(db, organizationId, a.sender_id);
    if (sender) await refreshThroughput(db, organizationId, sender);
  }
  await syncProgramStatus(db, organizationId, program.id);
}

/** Each of these programs follows its readiness (after a change to a sender attached to them). */
export async function syncProgramStatuses(db: TenantDb, organizationId: string, programIds: readonly string[]): Promise<void> {
  for (const id of new Set(programIds)) await syncProgramStatus(db, organizationId, id);
}

/** The sender's status changed: each program it is attached to follows its readiness. */
export async function syncProgramsOfSender(db: TenantDb, organizationId: string, senderId: string): Promise<void> {
  const attached = await q.activeAttachmentsOfSender(db, organizationId, senderId);
  await syncProgramStatuses(
    db,
    organizationId,
    attached.map((a) => a.program_id),
  );
}

/**
 * A sender's campaign is REGISTERED and the sender is attached to its program: a PENDING sender becomes
 * ACTIVE (registry transition `approved`). Called when the campaign is registered and when a sender is attached.
 */
export async function activateAttachedSender(
  db: TenantDb,
  services: Pick<Services, 'queue'>,
  organizationId: string,
  program: q.ProgramRow,
  senderId: string,
): Promise<void> {
  if (!program.campaign_registration_id) return;
  const campaign = await regQ.getCampaign(db, organizationId, program.campaign_registration_id);
  if (campaign?.status !== 'REGISTERED') return;
  const attached = (await q.activeAttachmentsOfSender(db, organizationId, senderId)).some(
    (a) => a.program_id === program.id && a.role !== 'TEST',
  );
  if (!attached) return;
  const sender = await sendersQ.getSender(db, organizationId, senderId, { forUpdate: true });
  if (sender) await applyRegistryEvent(db, services, organizationId, sender, 'approved', null);
}

/** The sender's program, created by its first brand registration; a later registration repoints it. */
/**
 * The sandbox sender sends through the carrier sandbox, not under a registered brand and campaign, and has no
 * protocol rows (PROTOCOLS_COMPATIBLE could never pass): attaching it in any role, and registering a brand or
 * campaign for it (which would attach it), are refused alike, saying why. `field` names the sender in the request.
 */
export function sandboxSenderRefused(field: string): ApiError {
  return new ApiError(
    422,
    'UNPROCESSABLE',
    'The sandbox sender sends through the carrier sandbox, not under a program’s brand and campaign; it cannot be attached. Attach a sender with its own number or agent.',
    { details: [{ field, message: 'the sandbox sender cannot be attached to a program', code: 'sandbox_sender' }] },
  );
}

export async function programForBrand(
  db: TenantDb,
  organizationId: string,
  sender: sendersQ.SenderRow,
  brand: regQ.BrandRow,
): Promise<q.ProgramRow> {
  const existing = await q.programOfSender(db, organizationId, sender.id);
  if (existing) return q.updateProgram(db, organizationId, existing.id, { brand_registration_id: brand.id, name: brand.display_name });
  const program = await q.insertProgram(db, organizationId, {
    name: brand.display_name,
    status: 'DRAFT',
    channels: channelsFor(sender.type),
    sender_id: sender.id,
    brand_registration_id: brand.id,
    campaign_registration_id: null,
  });
  // The sender the brand is registered for sends the program's traffic: attached as PRIMARY at once (its protocol
  // compatibility is a readiness check, PROTOCOLS_COMPATIBLE, not a refusal here).
  await q.insertAttachment(db, organizationId, { programId: program.id, senderId: sender.id, role: 'PRIMARY', at: brand.submitted_at });
  return program;
}

export async function setProgramCampaign(db: TenantDb, organizationId: string, senderId: string, campaignId: string): Promise<void> {
  const existing = await q.programOfSender(db, organizationId, senderId);
  if (existing) await q.updateProgram(db, organizationId, existing.id, { campaign_registration_id: campaignId });
}

export function programOfSender(db: TenantDb, organizationId: string, senderId: string): Promise<q.ProgramRow | undefined> {
  return q.programOfSender(db, organizationId, senderId);
}

export async function attachSender(
  tenant: Tenant,
  services: Services,
  programId: string,
  body: { senderId: string; role: ProgramSenderRole },
  now = new Date(),
): Promise<AttachmentView> {
  return inTransaction(tenant.db, async (tx) => {
    const db: TenantDb = tx;
    const { organizationId } = tenant;
    const program = found(await q.getProgram(db, organizationId, programId, { forUpdate: true }), 'Program');
    const sender = await sendersQ.getSender(db, organizationId, body.senderId);
    if (!sender) {
      throw new ApiError(404, 'NOT_FOUND', 'Sender ID not found.', {
        details: [{ field: 'body.senderId', message: 'no such sender ID in this organization', code: 'not_found' }],
      });
    }
    if (program.status === 'ARCHIVED') throw conflict('INVALID_STATE', 'An ARCHIVED program is read-only; senders cannot be attached.');
    if (sender.is_sandbox) throw sandboxSenderRefused('body.senderId');
    const enabled = (await protocolsQ.listSenderProtocols(db, organizationId, sender.id))
      .filter((p) => ENABLED.has(p.status))
      .map((p) => p.type);
    const compatible = enabled.filter((t) => program.channels.includes(t));
    if (!compatible.length) {
      throw unprocessable(
        'UNPROCESSABLE',
        `The sender has none of the program's channels (${program.channels.join(', ')}) enabled; enable one with POST /v1/sender-ids/{id}/protocols.`,
      );
    }
    const row = await q.insertAttachment(db, organizationId, { programId, senderId: sender.id, role: body.role, at: now });
    if (!row) throw conflict('ALREADY_EXISTS', 'The sender is already attached to this program; detach it first to change its role.');
    await q.updateProgram(db, organizationId, programId, {});
    await activateAttachedSender(db, services, organizationId, program, sender.id);
    await refreshThroughput(db, organizationId, (await sendersQ.getSender(db, organizationId, sender.id)) ?? sender); // its campaign's class
    await syncProgramStatus(db, organizationId, programId);
    return { row, senderLabel: sender.phone_number ?? sender.address ?? sender.name, protocols: compatible };
  });
}

export async function detachSender(tenant: Tenant, programId: string, senderId: string, now = new Date()): Promise<AttachmentView> {
  return inTransaction(tenant.db, async (tx) => {
    const db: TenantDb = tx;
    const { organizationId } = tenant;
    const program = found(await q.getProgram(db, organizationId, programId, { forUpdate: true }), 'Program');
    const row = found(await q.detachSender(db, organizationId, programId, senderId, now), 'Active attachment of the sender');
    await q.updateProgram(db, organizationId, programId, {});
    const sender = await sendersQ.getSender(db, organizationId, senderId);
    if (sender) await refreshThroughput(db, organizationId, sender); // without the program's campaign, its class drops
    await syncProgramStatus(db, organizationId, programId); // a detached PRIMARY takes an ACTIVE program back to DRAFT
    const enabled = (await protocolsQ.listSenderProtocols(db, organizationId, senderId))
      .filter((p) => ENABLED.has(p.status))
      .map((p) => p.type);
    return {
      row,
      senderLabel: sender ? (sender.phone_number ?? sender.address ?? sender.name) : null,
      protocols: enabled.filter((t) => program.channels.includes(t)),
    };
  });
}

/**
 * Archives the program (the table's `archive`: from DRAFT or ACTIVE; ARCHIVED again answers it unchanged): its
 * active attachments end (kept as the audit trail), so its senders carry none of its traffic and fall back to the
 * unregistered throughput class; a later brand registration of the sender it was created for makes a new program.
 */
export async function archiveProgram(tenant: Tenant, programId: string, now = new Date()): Promise<LoadedProgram> {
  return inTransaction(tenant.db, async (tx) => {
    const db: TenantDb = tx;
    const { organizationId } = tenant;
    const program = found(await q.getProgram(db, organizationId, programId, { forUpdate: true }), 'Program');
    const to = decideProgram(program.status, 'archive');
    if (to) {
      const ended = await q.detachAllOfProgram(db, organizationId, programId, now);
      await q.updateProgram(db, organizationId, programId, { status: to });
      for (const a of ended) {
        const sender = await sendersQ.getSender(db, organizationId, a.sender_id);
        if (sender) await refreshThroughput(db, organizationId, sender);
      }
    }
    const row = found(await q.getProgram(db, organizationId, programId), 'Program');
    return (await load(db, organizationId, [row]))[0]!;
  });
}
