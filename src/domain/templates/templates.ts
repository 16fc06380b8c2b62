// Templates section: the approved chat-app templates of an ACTIVE chat-app business sender, read from the
// provider (the carrier simulator keeps a catalogue). Only APPROVED ones are listed; the provider's ids and names
// never leave: each template gets a stable uuid derived from the provider's id. The simulator's catalogue is the
// same three templates for every sender; registering templates and sending one are issue 33 item 10.
import { createHash } from 'node:crypto';
import type { components } from '../../../generated/api.d.ts';
import { getSender } from '../../db/queries/sender-ids/senders.ts';
import { ProviderError, type ProviderChatAppTemplate } from '../../providers/provider.ts';
import { ApiError, invalidField, notFound } from '../errors.ts';
import { providerOperation } from '../providers.ts';
import type { Services, Tenant } from '../tenant.ts';

export type ChatAppTemplate = components['schemas']['ChatAppTemplate'];

/** A stable uuid (v5 layout over SHA-1) for a provider template of a sender. */
function templateId(senderId: string, providerTemplateId: string): string {
  const h = createHash('sha1').update(`${senderId}:${providerTemplateId}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

function toTemplate(senderId: string, t: ProviderChatAppTemplate): ChatAppTemplate {
  return {
    id: templateId(senderId, t.providerTemplateId),
    senderId,
    name: t.name,
    language: t.language,
    category: t.category,
    status: 'APPROVED',
    components: t.components.map((c) => ({ ...c, ...(c.buttons ? { buttons: c.buttons.map((b) => ({ ...b })) } : {}) })),
    variables: t.examples.map((e) => ({ component: e.component, index: e.index, example: e.example })),
    approvedAt: t.approvedAt ? t.approvedAt.toISOString() : null,
    updatedAt: t.updatedAt.toISOString(),
  };
}

/**
 * 404 for a sender not of the organization; 400 on query.senderId for a sender that is not CHATAPP_BUSINESS;
 * 409 INVALID_STATE when it is not ACTIVE; 502 UPSTREAM_ERROR when the provider cannot be reached.
 */
export async function listChatAppTemplates(tenant: Tenant, services: Services, senderId: string): Promise<ChatAppTemplate[]> {
  const sender = await getSender(tenant.db, tenant.organizationId, senderId);
  if (!sender) throw notFound('Sender ID');
  if (sender.type !== 'CHATAPP_BUSINESS')
    throw invalidField('query.senderId', `is a ${sender.type} sender, not a chat-app business sender (CHATAPP_BUSINESS)`);
  if (sender.status !== 'ACTIVE')
    throw new ApiError(409, 'INVALID_STATE', `The sender is ${sender.status}; templates are listed for ACTIVE senders only.`);
  const list = providerOperation(services.providers.forSender(sender), 'listChatAppTemplates', 'chat-app templates', 'query.senderId');
  let templates: ProviderChatAppTemplate[];
  try {
    templates = await list({
      organizationId: tenant.organizationId,
      senderId: sender.id,
      senderName: sender.name,
    });
  } catch (error) {
    if (error instanceof ProviderError)
      throw new ApiError(502, 'UPSTREAM_ERROR', 'The chat-app platform could not be reached; retry shortly.');
    throw error;
  }
  return templates
    .filter((t) => t.status === 'APPROVED')
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.language < b.language ? -1 : a.language > b.language ? 1 : 0))
    .map((t) => toTemplate(sender.id, t));
}
