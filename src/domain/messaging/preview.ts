// previewMessage: how a message would look and cost on its channel and on the SMS/MMS fallback, and, for a
// contact, the channel a send would use first and what the compliance gate would say. Nothing is stored.
import type { components } from '../../../generated/api.d.ts';
import * as contacts from '../../db/queries/conversations/contacts.ts';
import { evaluateCompliance } from '../compliance/gate.ts';
import { bodyField, unknownReference } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import { resolveContentAssets } from '../assets/media.ts';
import { assertTemplateSender, resolveTemplateContent } from '../templates/content.ts';
import { fallbackChannelFor, render, type Channel, type Rendering, type Warning } from './render.ts';
import { assertChannelAccepts, channelPlanOf, textOf } from './send.ts';
import { defaultChannelOf } from './senders.ts';
import { loadSendFacts, plannedRoute } from '../../db/queries/messages/accept.ts';

const NO_REVIEWS: ReadonlySet<string> = new Set();
import { sendSettingsOf } from '../sender-ids/sending-rule.ts';
import type { SenderOfProvider } from '../../providers/provider.ts';
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
  services: Pick<Services, 'config' | 'providers'>,
  body: PreviewRequest,
  now = new Date(),
): Promise<Preview> {
  // As the send would: assetId → signed media link, a template filled with its parameters.
  const resolved = await resolveTemplateContent(tenant, await resolveContentAssets(tenant, services, body.content));
  body = { ...body, content: resolved.content };
  // The ids first, in the order the send checks them.
  const contact = body.contactId ? await contacts.getContact(tenant.db, tenant.organizationId, body.contactId) : undefined;
  if (body.contactId && !contact) throw unknownReference(bodyField('contactId'), 'contact');
  // The send's own read and channel plan (loadSendFacts, channelPlanOf): the sender, the channels it may carry, who
  // carries its fallback, the settings each rendering uses (smartEncoding). Its readiness is the send's to refuse.
  const facts = await loadSendFacts(tenant.db, tenant.organizationId, {
    senderId: body.senderId,
    messageType: body.messageType ?? 'MARKETING',
    rules: false,
    quiet: null,
    eventTypes: [],
  });
  if (body.senderId && !facts.sender) throw unknownReference(bodyField('senderId'), 'sender ID');
  const sender = facts.sender;
  const requested = body.channelType ?? defaultChannelOf(sender);
  assertChannelAccepts(requested, body.content);
  if (sender) assertTemplateSender(resolved.templateSenderId, sender.id);
  const reviewedHere = (s: SenderOfProvider) => services.providers.forSender(s).registry?.kinds ?? NO_REVIEWS;
  const channelPlan = sender ? channelPlanOf(facts, sender, requested, body.fallbackToSms, reviewedHere) : null;
  const settings = channelPlan?.decision.settings ?? sendSettingsOf([]);
  const fallbackAllowed = channelPlan?.fallbackAllowed ?? body.fallbackToSms ?? true;
  const fallbackChannel = fallbackChannelFor(body.content);
  const carrier = channelPlan?.carrierOf(fallbackChannel);
  const renderings: Preview['renderings'] = [{ role: 'primary', rendering: render(requested, body.content, settings) }];
  if ((requested === 'RCS' || requested === 'CHATAPP') && fallbackAllowed) {
    const fallbackSettings = carrier && carrier.senderId !== null ? carrier.settings : settings;
    renderings.push({ role: 'fallback', rendering: render(fallbackChannel, body.content, fallbackSettings) });
  }

  const warnings: Warning[] = [];
  let plannedChannel: Channel | null = null;
  if (contact) {
    // The send path's own plan (routeSql), with the conversation's chat-app session.
    const usable = channelPlan?.decision.usable ?? (() => true);
    const plan = await plannedRoute(tenant.db, tenant.organizationId, {
      contactId: contact.id,
      senderId: sender?.id ?? null,
      requested,
      requestedUsable: usable(requested),
      fallbackOk: fallbackAllowed && (carrier === undefined || carrier.senderId !== null),
      sessionFree: body.content.type === 'template',
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
