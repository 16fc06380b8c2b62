// Templates section: chat-app templates registered for an ACTIVE chat-app business sender (CHATAPP_BUSINESS),
// submitted to the sender's provider for the platform's review, and answered through the provider callback route
// (PENDING → APPROVED or REJECTED with a reason; an approved one may later be PAUSED). Stored here, per
// organization; GET /v1/chatapp-templates lists the APPROVED ones (the specification's operation), GET …/{id} reads
// any of them. Sending one is the `template` content of a send (content.ts).
import type { components } from '../../../generated/api.d.ts';
import { inTransaction } from '../../db/database.ts';
import { getSender } from '../../db/queries/sender-ids/senders.ts';
import * as q from '../../db/queries/templates/templates.ts';
import type { AppContext } from '../../app-context.ts';
import { ProviderError, ProviderRejection, type ProviderCallback } from '../../providers/provider.ts';
import { ApiError, badRequest, bodyField, invalidField, notFound, unknownReference, type FieldError } from '../errors.ts';
import { providerOperation } from '../providers.ts';
import { tenantFor, type Services, type Tenant } from '../tenant.ts';
import { inTenantTransaction } from '../messaging/context.ts';
import { numbersIn, placeholderKey, placeholderName, placeholdersOf, URL_SUFFIX } from './placeholders.ts';

export type ChatAppTemplate = components['schemas']['ChatAppTemplate'];
type Registration = components['schemas']['ChatAppTemplateRegistration'];
type RegisterRequest = components['schemas']['RegisterChatAppTemplateRequest'];

/** What the provider operation is called in a 422 PROVIDER_UNSUPPORTED. */
const WHAT = 'chat-app templates';
/** The platforms' limits on a header and a footer text. */
export const HEADER_MAX = 60;
const FOOTER_MAX = 60;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function toRegistration(t: q.TemplateRow): Registration {
  return {
    id: t.id,
    senderId: t.sender_id,
    name: t.name,
    language: t.language,
    category: t.category,
    status: t.status,
    components: t.components,
    variables: t.variables,
    rejectionReason: t.rejection_reason,
    approvedAt: iso(t.approved_at),
    createdAt: t.created_at.toISOString(),
    updatedAt: t.updated_at.toISOString(),
  };
}

function toApproved(t: q.TemplateRow): ChatAppTemplate {
  return {
    id: t.id,
    senderId: t.sender_id,
    name: t.name,
    language: t.language,
    category: t.category,
    status: 'APPROVED',
    components: t.components,
    variables: t.variables,
    approvedAt: iso(t.approved_at),
    updatedAt: t.updated_at.toISOString(),
  };
}

/** The sender of a templates request: the organization's, CHATAPP_BUSINESS, ACTIVE, with a provider that takes templates. */
async function chatSender(tenant: Tenant, services: Services, senderId: string, field: string) {
  const sender = await getSender(tenant.db, tenant.organizationId, senderId);
  if (!sender) throw field.startsWith('body.') ? unknownReference(field, 'sender ID') : notFound('Sender ID');
  if (sender.type !== 'CHATAPP_BUSINESS')
    throw invalidField(field, `is a ${sender.type} sender, not a chat-app business sender (CHATAPP_BUSINESS)`);
  if (sender.status !== 'ACTIVE')
    throw new ApiError(409, 'INVALID_STATE', `The sender is ${sender.status}; templates are kept for ACTIVE senders only.`);
  const submit = providerOperation(services.providers.forSender(sender), 'submitChatAppTemplate', WHAT, field);
  return { sender, submit };
}

/**
 * GET /v1/chatapp-templates: the sender's APPROVED templates, by name then language. 404 for a sender not of the
 * organization; 400 on query.senderId for a sender that is not CHATAPP_BUSINESS; 409 INVALID_STATE when it is not
 * ACTIVE; 422 PROVIDER_UNSUPPORTED when its provider keeps no chat-app templates.
 */
export async function listChatAppTemplates(tenant: Tenant, services: Services, senderId: string): Promise<ChatAppTemplate[]> {
  const { sender } = await chatSender(tenant, services, senderId, 'query.senderId');
  return (await q.templatesOfSender(tenant.db, tenant.organizationId, sender.id, 'APPROVED')).map(toApproved);
}

/** GET /v1/chatapp-templates/{id}: any status, with the review's reason. */
export async function getChatAppTemplate(tenant: Tenant, id: string): Promise<Registration> {
  const t = await q.getTemplate(tenant.db, tenant.organizationId, id);
  if (!t) throw notFound('Chat-app template');
  return toRegistration(t);
}

/** DELETE /v1/chatapp-templates/{id}: withdrawn here; messages already sent keep their rendered content. */
export async function deleteChatAppTemplate(tenant: Tenant, id: string): Promise<void> {
  if (!(await q.deleteTemplate(tenant.db, tenant.organizationId, id))) throw notFound('Chat-app template');
}

/** 400 naming each field of a registration the platforms would refuse (see RegisterChatAppTemplateRequest). */
function registrationProblems(body: RegisterRequest): FieldError[] {
  const problems: FieldError[] = [];
  const at = (i: number, ...rest: Array<string | number>) => bodyField('components', i, ...rest);
  const seen = new Set<string>();
  body.components.forEach((c, i) => {
    if (seen.has(c.type)) problems.push({ field: at(i, 'type'), message: `a template has at most one ${c.type} component` });
    seen.add(c.type);
    if (c.type === 'BUTTONS') {
      if (c.text !== undefined) problems.push({ field: at(i, 'text'), message: 'BUTTONS carries buttons, not text' });
      if (!c.buttons?.length) problems.push({ field: at(i, 'buttons'), message: 'BUTTONS needs at least one button' });
      c.buttons?.forEach((b, j) => {
        if (b.type === 'URL' && !b.url) problems.push({ field: at(i, 'buttons', j, 'url'), message: 'a URL button needs url' });
        if (b.type !== 'URL' && b.url !== undefined)
          problems.push({ field: at(i, 'buttons', j, 'url'), message: 'only a URL button has url' });
        if (b.type === 'PHONE_NUMBER' && !b.phoneNumber)
          problems.push({ field: at(i, 'buttons', j, 'phoneNumber'), message: 'a PHONE_NUMBER button needs phoneNumber' });
        if (b.type !== 'PHONE_NUMBER' && b.phoneNumber !== undefined)
          problems.push({ field: at(i, 'buttons', j, 'phoneNumber'), message: 'only a PHONE_NUMBER button has phoneNumber' });
        const inUrl = b.url ? numbersIn(b.url) : [];
        if (inUrl.length > 1 || (inUrl.length === 1 && !b.url!.endsWith(URL_SUFFIX)))
          problems.push({ field: at(i, 'buttons', j, 'url'), message: `a URL takes one placeholder, ${URL_SUFFIX}, at its end` });
      });
      return;
    }
    if (c.buttons !== undefined) problems.push({ field: at(i, 'buttons'), message: `only BUTTONS has buttons` });
    if (!c.text) return void problems.push({ field: at(i, 'text'), message: `${c.type} needs text` });
    const numbers = numbersIn(c.text);
    if (c.type === 'FOOTER' && numbers.length) problems.push({ field: at(i, 'text'), message: 'a FOOTER has no placeholders' });
    if (c.type === 'HEADER' && (numbers.length > 1 || numbers.some((n) => n !== 1)))
      problems.push({ field: at(i, 'text'), message: 'a HEADER has at most one placeholder, {{1}}' });
    const distinct = [...new Set(numbers)].sort((a, b) => a - b);
    if (distinct.some((n, k) => n !== k + 1))
      problems.push({ field: at(i, 'text'), message: 'placeholders are numbered {{1}}, {{2}} … without gaps' });
    const max = c.type === 'BODY' ? 1024 : c.type === 'HEADER' ? HEADER_MAX : FOOTER_MAX;
    if ([...c.text].length > max) problems.push({ field: at(i, 'text'), message: `a ${c.type} text is at most ${max} characters` });
  });
  if (!seen.has('BODY')) problems.push({ field: bodyField('components'), message: 'a template needs a BODY component' });
  if (problems.length) return problems;
  // Every placeholder has an example, and every example a placeholder.
  const wanted = placeholdersOf(body.components);
  const given = new Map<string, number>();
  (body.variables ?? []).forEach((v, i) => {
    const key = placeholderKey(v);
    if (given.has(key) || !wanted.some((p) => placeholderKey(p) === key))
      problems.push({
        field: bodyField('variables', i),
        message: `${placeholderName(v)} is not a placeholder of the template, or is given twice`,
      });
    given.set(key, i);
  });
  for (const p of wanted)
    if (!given.has(placeholderKey(p)))
      problems.push({ field: bodyField('variables'), message: `an example for ${placeholderName(p)} is missing` });
  return problems;
}

/**
 * POST /v1/chatapp-templates: stored PENDING and submitted to the sender's provider in one transaction, so a
 * provider that cannot be reached (502) or refuses it (422) leaves nothing behind; 409 ALREADY_EXISTS for a name and
 * language the sender already has.
 */
export async function registerChatAppTemplate(tenant: Tenant, services: Services, body: RegisterRequest): Promise<Registration> {
  const { sender, submit } = await chatSender(tenant, services, body.senderId, bodyField('senderId'));
  const problems = registrationProblems(body);
  if (problems.length) throw badRequest('The template is not one the chat-app platforms accept.', problems);
  return inTenantTransaction(tenant, async (t) => {
    const row = await q.insertTemplate(t.db, t.organizationId, {
      sender_id: sender.id,
      name: body.name,
      language: body.language,
      category: body.category,
      status: 'PENDING',
      components: JSON.stringify(body.components),
      variables: JSON.stringify(body.variables ?? []),
    });
    if (!row)
      throw new ApiError(409, 'ALREADY_EXISTS', `The sender already has a template ${body.name} in ${body.language}.`, {
        details: [{ field: bodyField('name'), message: 'taken for this sender and language' }],
      });
    let providerTemplateId: string;
    try {
      ({ providerTemplateId } = await submit({
        organizationId: t.organizationId,
        senderId: sender.id,
        senderName: sender.name,
        reference: row.id,
        name: row.name,
        language: row.language,
        category: row.category,
        components: row.components,
        examples: row.variables,
      }));
    } catch (error) {
      if (error instanceof ProviderRejection)
        throw new ApiError(422, 'UNPROCESSABLE', `The chat-app platform refused the template: ${error.message}`);
      if (error instanceof ProviderError)
        throw new ApiError(502, 'UPSTREAM_ERROR', 'The chat-app platform could not be reached; nothing was registered. Retry shortly.');
      throw error;
    }
    await q.setProviderTemplateId(t.db, t.organizationId, row.id, providerTemplateId);
    return toRegistration(row);
  });
}

export type TemplateReview = Extract<ProviderCallback, { type: 'template' }>;

/** The platform's review answers (provider callbacks), each applied in its template's organization; an unknown template's is dropped. */
export async function applyTemplateReviews(app: AppContext, reviews: TemplateReview[]): Promise<void> {
  if (reviews.length === 0) return;
  // System read: the callback names a template, not an organization.
  const owners = new Map(
    (await q.templatesByIds(app.db, [...new Set(reviews.map((r) => r.reference))])).map((t) => [t.id, t.organization_id]),
  );
  // In the platform's order: callbacks due together come in any order (an approval and the pause after it).
  const known = reviews.filter((r) => owners.has(r.reference)).sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  for (const [organizationId, own] of Map.groupBy(known, (r) => owners.get(r.reference)!)) {
    const { db } = await tenantFor(app, organizationId);
    await inTransaction(db, async (tx) => {
      for (const r of own)
        await q.applyReview(tx, organizationId, { id: r.reference, status: r.status, reason: r.reason, at: new Date(r.at) });
    });
  }
}
