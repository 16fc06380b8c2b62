// The `template` content of a send: the approved chat-app template it names, filled with its parameters, is what
// is sent, stored, shown and priced (render.ts RenderedTemplate). Resolved once per send before anything is read
// for the send (send.ts resolveContents, preview.ts), so the compliance gate's content rules judge the text the
// contact receives. The sender check comes once the send's sender is known (assertTemplateSender).
import { getTemplate, type TemplateRow } from '../../db/queries/templates/templates.ts';
import type { RenderedTemplate, SendContent } from '../messaging/render.ts';
import { ApiError, unknownReference, type FieldError } from '../errors.ts';
import type { Tenant } from '../tenant.ts';
import { fill, placeholderKey, placeholderName, placeholdersOf, URL_SUFFIX, type Placeholder } from './placeholders.ts';
import { HEADER_MAX } from './templates.ts';

type TemplateContent = Extract<SendContent, { type: 'template' }>;

/** The platforms' limits on what a filled template may hold. */
const BODY_MAX = 1024;
/** Characters a parameter may not hold in a header or body (the platforms refuse them). */
const FORBIDDEN_IN_TEXT = /[\n\t]| {5}/;

const parametersInvalid = (message: string, details: FieldError[]) =>
  new ApiError(422, 'TEMPLATE_PARAMETERS_INVALID', message, { details });

/**
 * `content` resolved when it is a `template` (the others come back as they are), with the template's sender: 404
 * naming `<field>.templateId` for a template not of the organization; 422 TEMPLATE_NOT_APPROVED when it is not
 * APPROVED; 422 TEMPLATE_PARAMETERS_INVALID naming each missing, unknown, repeated or too long parameter.
 */
export async function resolveTemplateContent(
  tenant: Tenant,
  content: SendContent,
  field = 'body.content',
): Promise<{ content: SendContent; templateSenderId: string | null }> {
  if (content.type !== 'template') return { content, templateSenderId: null };
  if (typeof (content as Partial<RenderedTemplate>).text === 'string') throw new Error('template content resolved twice');
  const t = await getTemplate(tenant.db, tenant.organizationId, content.templateId);
  if (!t) throw unknownReference(`${field}.templateId`, 'chat-app template');
  if (t.status !== 'APPROVED') {
    const why = t.status === 'PENDING' ? 'still in review' : t.status === 'PAUSED' ? 'paused by the platform' : 'rejected';
    throw new ApiError(
      422,
      'TEMPLATE_NOT_APPROVED',
      `The template ${t.name} (${t.language}) is ${t.status} (${why}); only an APPROVED template is sent.`,
      {
        details: [{ field: `${field}.templateId`, message: `the template is ${t.status}`, code: t.status }],
      },
    );
  }
  return { content: render(t, content, `${field}.parameters`), templateSenderId: t.sender_id };
}

/** The template with the content's parameters applied; 422 TEMPLATE_PARAMETERS_INVALID when they do not fit it. */
function render(t: TemplateRow, content: TemplateContent, field: string): RenderedTemplate {
  const wanted = placeholdersOf(t.components);
  const values = new Map<string, string>();
  const problems: FieldError[] = [];
  (content.parameters ?? []).forEach((p, i) => {
    const key = placeholderKey(p);
    if (!wanted.some((w) => placeholderKey(w) === key))
      problems.push({
        field: `${field}.${i}`,
        message: `${placeholderName(p)} is not a placeholder of the template`,
        code: 'unknown_parameter',
      });
    else if (values.has(key))
      problems.push({ field: `${field}.${i}`, message: `${placeholderName(p)} is given twice`, code: 'repeated_parameter' });
    else if (p.component !== 'BUTTONS' && FORBIDDEN_IN_TEXT.test(p.value))
      problems.push({
        field: `${field}.${i}.value`,
        message: 'a text parameter holds no new line, tab or more than four spaces in a row',
        code: 'invalid_value',
      });
    values.set(key, p.value);
  });
  for (const w of wanted)
    if (!values.has(placeholderKey(w)))
      problems.push({ field, message: `a value for ${placeholderName(w)} is missing`, code: `missing:${placeholderKey(w)}` });
  if (problems.length) throw parametersInvalid(`The parameters do not fill the template ${t.name} (${t.language}).`, problems);

  const valueOf = (component: Placeholder['component']) => (n: number) => values.get(placeholderKey({ component, index: n }))!;
  const header = t.components.find((c) => c.type === 'HEADER')?.text;
  const body = t.components.find((c) => c.type === 'BODY')!.text!;
  const footer = t.components.find((c) => c.type === 'FOOTER')?.text;
  const title = header === undefined ? undefined : fill(header, valueOf('HEADER'));
  const filledBody = fill(body, valueOf('BODY'));
  const tooLong = (component: 'HEADER' | 'BODY', text: string, max: number) =>
    [...text].length > max
      ? [
          {
            field,
            message: `the filled ${component} is ${[...text].length} characters; the platform takes at most ${max}`,
            code: 'too_long',
          },
        ]
      : [];
  const long = [...(title === undefined ? [] : tooLong('HEADER', title, HEADER_MAX)), ...tooLong('BODY', filledBody, BODY_MAX)];
  if (long.length) throw parametersInvalid(`The parameters make the template ${t.name} (${t.language}) too long.`, long);

  const buttons = t.components.find((c) => c.type === 'BUTTONS')?.buttons ?? [];
  const actions = buttons.flatMap((b, i) =>
    b.type === 'URL' && b.url
      ? [
          {
            text: b.text,
            url: b.url.endsWith(URL_SUFFIX) ? b.url.slice(0, -URL_SUFFIX.length) + encodeURIComponent(valueOf('BUTTONS')(i + 1)) : b.url,
          },
        ]
      : [],
  );
  const replies = buttons.flatMap((b) => (b.type === 'QUICK_REPLY' ? [{ text: b.text, postback: b.text }] : []));
  return {
    type: 'template',
    templateId: t.id,
    ...(content.parameters ? { parameters: content.parameters } : {}),
    ...(title !== undefined ? { title } : {}),
    text: footer ? `${filledBody}\n${footer}` : filledBody,
    ...(actions.length ? { actions } : {}),
    ...(replies.length ? { replies } : {}),
  };
}

/** 422 TEMPLATE_NOT_APPROVED when the send's sender is not the one the template was approved for. */
export function assertTemplateSender(templateSenderId: string | null, senderId: string, field = 'body.content.templateId'): void {
  if (templateSenderId === null || templateSenderId === senderId) return;
  throw new ApiError(
    422,
    'TEMPLATE_NOT_APPROVED',
    `The template is approved for the sender ${templateSenderId}, not for ${senderId}: a template is sent from the sender it was registered for.`,
    { details: [{ field, message: 'approved for another sender', code: 'other_sender' }] },
  );
}
