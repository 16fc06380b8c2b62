// Stored bot rows → the document's shapes (Bot, BotSummary, BotRevision, BotTester).
import type { components } from '../../../generated/api.d.ts';
import type { BotRevisionRow, BotRow, BotTesterRow } from '../../db/queries/bots/bots.ts';
import type { BotFlow } from './flow.ts';

type S = components['schemas'];

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** What a bot and its summary share. */
function botFields(row: BotRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    channel: row.channel,
    senderId: row.sender_id,
    status: row.status,
    version: row.version,
    publishedVersion: row.published_version,
    publishedAt: iso(row.published_at),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toBot(row: BotRow): S['Bot'] {
  return {
    ...botFields(row),
    draftFlow: row.draft_flow as BotFlow,
    publishedFlow: (row.published_flow as BotFlow | null) ?? null,
    triggers: (row.triggers as S['BotTrigger'][] | null) ?? [],
    inboundTriggers: (row.inbound_triggers as S['BotInboundTrigger'][] | null) ?? [],
    defaultForSender: row.default_for_sender,
  };
}

export function toBotSummary(row: BotRow): S['BotSummary'] {
  return { ...botFields(row), nodeCount: (row.draft_flow as BotFlow).nodes.length };
}

export function toBotRevision(row: BotRevisionRow): S['BotRevision'] {
  return {
    id: row.id,
    botId: row.bot_id,
    version: row.version,
    flow: row.flow as BotFlow,
    createdAt: row.created_at.toISOString(),
    publishedAt: iso(row.published_at),
  };
}

export function toBotTester(row: BotTesterRow): S['BotTester'] {
  return {
    id: row.id,
    botId: row.bot_id,
    contactId: row.contact_id,
    phone: row.phone,
    name: row.name,
    rcsInviteStatus: row.rcs_invite_status,
    rcsInviteSentAt: iso(row.rcs_invite_sent_at),
    rcsInviteError: row.rcs_invite_error,
    createdAt: row.created_at.toISOString(),
  };
}
