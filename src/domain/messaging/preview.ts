// previewMessage: how a message would look and cost on its channel and on the SMS/MMS fallback, and, for a
// contact, the channel a send would use first and what the compliance gate would say. Nothing is stored.
import type { components } from '../../../generated/api.d.ts';
import * as contacts from '../../db/queries/conversations/contacts.ts';
import { evaluateCompliance } from '../compliance/gate.ts';
import { bodyField, unknownReference } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import { resolveContentAssets } from '../assets/media.ts';
import { fallbackChannelFor, render, type Channel, type Rendering, type Warning } from './render.ts';
import { requireSender } from './senders.ts';
import { assertChannelAccepts, textOf } from './send.ts';
import { plannedRoute } from '../../db/queries/messages/accept.ts';
import * as senders from '../../db/queries/sender-ids/senders.ts';
import { decideSending, sendSettingsOf } from '../sender-ids/sending-rule.ts';
import { listSenderProtocols } from '../../db/queries/sender-ids/protocols.ts';
import { SESSION_HOURS } from './conversation.ts';

type PreviewRequest = components['schemas']['MessagePreviewRequest'];

export type Preview = {
  requestedChannel: Channel;
  plannedChannel: Channel | null;
  renderings: Array<{ role: 'primary' | 'fallback'; rendering: Rendering }>;
  warnings: Warning[];
};

/** An unknown `contactId` or `senderId` answers 404 naming it, as `POST /v1/messages/send` would. */
export async function previewMessage(
  tenant: Tenant,
  services: Pick<Services, 'config'>,
  body: PreviewRequest,
  now = new Date(),
): Promise<Preview> {
  body = { ...body, content: await resolveContentAssets(tenant, services, body.content) }; // as the send would: assetId → signed media link
  const requested = body.channelType ?? 'RCS';
  // The ids first, in the order the send checks them.
  const contact = body.contactId ? await contacts.getContact(tenant.db, tenant.organizationId, body.contactId) : undefined;
  if (body.contactId && !contact) throw unknownReference(bodyField('contactId'), 'contact');
  const sender = body.senderId
    ? await requireSender(tenant.db, tenant.organizationId, body.senderId, bodyField('senderId'))
    : await senders.oldestActiveSender(tenant.db, tenant.organizationId);
  assertChannelAccepts(requested, body.content);
  // The sender's protocols: the channels it may use, and the settings its messages are rendered with (smartEncoding).
  const protocols = sender ? await listSenderProtocols(tenant.db, tenant.organizationId, sender.id) : [];
  const settings = sendSettingsOf(protocols);
  const fallbackAllowed = body.fallbackToSms ?? settings.fallbackToSms; // as the send decides
  const renderings: Preview['renderings'] = [{ role: 'primary', rendering: render(requested, body.content, settings) }];
  if ((requested === 'RCS' || requested === 'CHATAPP') && fallbackAllowed) {
    renderings.push({ role: 'fallback', rendering: render(fallbackChannelFor(body.content), body.content, settings) });
  }

  const warnings: Warning[] = [];
  let plannedChannel: Channel | null = null;
  if (contact) {
    // The send path's own plan (routeSql), with the sender's protocols and the conversation's chat-app session.
    // The sending rule's channels (its readiness is the send's to refuse: the preview plans the channel only).
    const usable = sender
      ? decideSending({ sender, protocols, program: null, recipientIsTestDevice: null, reviewedHere: new Set() }).usable
      : () => true;
    const fallbackChannel = fallbackChannelFor(body.content);
    const plan = await plannedRoute(tenant.db, tenant.organizationId, {
      contactId: contact.id,
      senderId: sender?.id ?? null,
      requested,
      requestedUsable: usable(requested),
      fallbackOk: fallbackAllowed && usable(fallbackChannel),
      sessionHours: SESSION_HOURS,
      now,
    });
    plannedChannel = plan?.route === 'primary' ? requested : plan?.route === 'fallback' ? fallbackChannel : null;
    if (!plannedChannel)
      warnings.push({
        code: 'NO_CHANNEL_AVAILABLE',
        message: 'No channel can carry this message to the contact with the current settings.',
      });
    if (requested === 'RCS' && contact.rcs_capable === null) {
      warnings.push({
        code: 'CAPABILITY_UNKNOWN',
        message: "The contact's RCS capability is unknown: RCS is attempted, the fallback used if it is not delivered.",
      });
    }
    const verdict = await evaluateCompliance({
      db: tenant.db,
      organizationId: tenant.organizationId,
      contact,
      messageType: body.messageType ?? 'MARKETING',
      content: textOf(body.content),
      now,
    });
    for (const reason of verdict.reasons) warnings.push({ code: reason.code, message: reason.message });
  }
  return { requestedChannel: requested, plannedChannel, renderings, warnings };
}
