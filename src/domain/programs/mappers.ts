// Programs section: loaded programs → the document's shapes (openapi/schemas/programs.yaml). Provider names and
// internal routing ids are never part of them.
import type { components } from '../../../generated/api.d.ts';
import type { AttachmentView, LoadedProgram } from './programs.ts';

type S = components['schemas'];

export function toAttachment({ row, senderLabel, protocols }: AttachmentView): S['ProgramSenderAttachment'] {
  return {
    id: row.id,
    programId: row.program_id,
    senderId: row.sender_id,
    senderLabel,
    role: row.role,
    status: row.status as 'ACTIVE' | 'DETACHED',
    protocols: protocols as S['Channel'][],
    attachedAt: row.attached_at.toISOString(),
    detachedAt: row.detached_at ? row.detached_at.toISOString() : null,
  };
}

export function toProgram(p: LoadedProgram): S['Program'] {
  return {
    id: p.row.id,
    name: p.row.name,
    status: p.row.status,
    channels: p.row.channels,
    brand: p.brand && { registrationId: p.brand.id, displayName: p.brand.display_name, status: p.brand.status },
    campaign: p.campaign && {
      registrationId: p.campaign.id,
      useCase: p.campaign.use_case,
      status: p.campaign.status,
    },
    senders: p.attachments.map(toAttachment),
    readiness: p.evaluation.readiness,
    requiredActions: p.evaluation.requiredActions,
    nextAction: p.evaluation.nextAction,
    createdAt: p.row.created_at.toISOString(),
    updatedAt: p.row.updated_at.toISOString(),
  };
}

export function toProgramStatus(p: LoadedProgram, now = new Date()): S['ProgramStatusResponse']['data'] {
  return {
    programId: p.row.id,
    status: p.row.status,
    customerStatus: p.evaluation.customerStatus,
    customerStatusMessage: p.evaluation.customerStatusMessage,
    brandStatus: p.brand?.status ?? null,
    campaignStatus: p.campaign?.status ?? null,
    readiness: p.evaluation.readiness,
    requiredActions: p.evaluation.requiredActions,
    nextAction: p.evaluation.nextAction,
    evaluatedAt: now.toISOString(),
  };
}
