// How one message looks on each channel, what it counts as (segments, encoding) and what it costs. Used by
// send (estimate and the dispatched body), preview (both renderings) and the dispatcher (the fallback body).
// The rules are the contract's (SendMessageContent, MessagePreviewWarning): RCS keeps cards, buttons and
// chips; SMS/MMS carry `title`, `text`, one `<action text>: <url>` line per action and a numbered `Reply 1 for …, 2 for …` line.
// A `template` content is rendered once it is resolved (src/domain/templates/content.ts): the approved template
// with its parameters applied, its header as the title, its body and footer as the text, its buttons as actions and
// replies; it is billed as text (segments), like the text it is.
import type { components } from '../../../generated/api.d.ts';
import { countSegments, smartEncode, type Encoding } from './sms-segments.ts';
import { CARD_OR_MEDIA_PRICE, textPrice } from './pricing.ts';

export type SendContent = components['schemas']['SendMessageContent'];
export type Channel = components['schemas']['Channel'];
type Action = components['schemas']['MessageContentAction'];
type Reply = components['schemas']['MessageContentReply'];
type WarningCode = components['schemas']['MessagePreviewWarning']['code'];
export type Warning = { code: WarningCode; message: string };

export type Rendering = {
  channel: Channel;
  body: string | null;
  title: string | null;
  mediaUrl: string | null;
  actions: Action[];
  replies: Reply[];
  segments: number;
  encoding: Encoding | null;
  characters: number;
  /** 1/10,000 USD */
  costUnits: number;
  warnings: Warning[];
};

type TemplateContent = Extract<SendContent, { type: 'template' }>;
/** A `template` content once resolved: the approved template with its parameters applied (templates/content.ts). */
export type RenderedTemplate = TemplateContent & { title?: string; text: string; actions?: Action[]; replies?: Reply[] };

/** The resolved form of a template content; a template reaches rendering only resolved (send and preview resolve it first). */
function renderedTemplate(content: TemplateContent): RenderedTemplate {
  const r = content as Partial<RenderedTemplate>;
  if (typeof r.text !== 'string') throw new Error('a template content is rendered only once resolved (resolveTemplateContent)');
  return content as RenderedTemplate;
}

/** The plain text a template content shows: its header and its body (with the footer). */
export const templateText = (content: TemplateContent): string => {
  const r = renderedTemplate(content);
  return [r.title, r.text].filter(Boolean).join('\n');
};

/** What a sender's protocol settings change in a rendering (sending-rule.ts `SendSettings`); none: as stored. */
export type RenderSettings = { smartEncoding?: boolean };

const MAX_SMS_BODY = 1600;
const CHATAPP_MAX_REPLIES = 3;
const CHATAPP_REPLY_LENGTH = 20;

type Card = { title?: string; text?: string | null; mediaUrl?: string | null; actions?: Action[]; replies?: Reply[] };

const actionsOf = (c: SendContent): Action[] => ('actions' in c && c.actions ? c.actions : []);
const repliesOf = (c: SendContent): Reply[] => ('replies' in c && c.replies ? c.replies : []);

/** SMS when the content has no media to carry, MMS when it has. */
export function fallbackChannelFor(content: SendContent): 'SMS' | 'MMS' {
  if (content.type === 'media') return 'MMS';
  if (content.type === 'card' && (content.mediaUrl || content.assetId)) return 'MMS'; // an asset is media too
  return 'SMS';
}

/** Whether `channelType: SMS|MMS` can carry this content type (the contract's table); RCS/CHATAPP carry all. */
export function channelAccepts(channel: Channel, content: SendContent): boolean {
  // A template is a chat-app platform's: it is sent on CHATAPP only.
  if (content.type === 'template') return channel === 'CHATAPP';
  if (channel === 'SMS')
    return content.type === 'text' || content.type === 'carousel' || (content.type === 'card' && !content.mediaUrl && !content.assetId);
  if (channel === 'MMS') return content.type === 'media' || (content.type === 'card' && Boolean(content.mediaUrl || content.assetId));
  return true;
}

function cardLines(card: Card): string[] {
  const lines: string[] = [];
  if (card.title) lines.push(card.title);
  if (card.text) lines.push(card.text);
  for (const a of card.actions ?? []) lines.push(`${a.text}: ${a.url}`);
  // Numbered, so a handset that cannot tap knows what to send: a bot takes the number as a tap (bots/runtime.ts intentOf).
  if (card.replies?.length) lines.push(`Reply ${card.replies.map((r, i) => `${i + 1} for ${r.text}`).join(', ')}`);
  return lines;
}

function textBilled(body: string, warnings: Warning[]): Pick<Rendering, 'segments' | 'encoding' | 'characters' | 'costUnits'> {
  const count = countSegments(body);
  if (count.encoding === 'UCS2')
    warnings.push({
      code: 'UCS2_ENCODING',
      message: 'The text has characters outside GSM-7, so each segment holds 70 (67 when split) characters.',
    });
  if (count.segments > 1) warnings.push({ code: 'MULTIPART', message: `The text needs ${count.segments} segments.` });
  return { segments: count.segments, encoding: count.encoding, characters: count.characters, costUnits: textPrice(count.segments) };
}

const perMessage = (body: string | null): Pick<Rendering, 'segments' | 'encoding' | 'characters' | 'costUnits'> => ({
  segments: 1,
  encoding: null,
  characters: body ? [...body].length : 0,
  costUnits: CARD_OR_MEDIA_PRICE,
});

function renderSmsOrMms(channel: 'SMS' | 'MMS', content: SendContent, settings: RenderSettings): Rendering {
  const warnings: Warning[] = [];
  let lines: string[];
  let mediaUrl: string | null = null;
  if (content.type === 'carousel') {
    lines = [content.cards.map((card) => cardLines(card).join('\n')).join('\n\n')];
    if (content.cards.some((card) => card.mediaUrl))
      warnings.push({ code: 'MEDIA_DROPPED', message: 'Card media cannot be carried by SMS and is dropped.' });
  } else if (content.type === 'media') {
    lines = cardLines({ text: content.text ?? null, actions: content.actions, replies: content.replies });
    mediaUrl = content.mediaUrl ?? null;
  } else if (content.type === 'card') {
    lines = cardLines(content);
    mediaUrl = content.mediaUrl ?? null;
  } else if (content.type === 'template') {
    lines = cardLines(renderedTemplate(content));
  } else {
    lines = cardLines({ text: content.text, actions: content.actions, replies: content.replies });
  }
  const allActions = content.type === 'carousel' ? content.cards.flatMap((c) => c.actions ?? []) : actionsOf(content);
  const allReplies = content.type === 'carousel' ? content.cards.flatMap((c) => c.replies ?? []) : repliesOf(content);
  if (allActions.length)
    warnings.push({
      code: 'ACTIONS_AS_LINKS',
      message: `${allActions.length} URL action${allActions.length > 1 ? 's are' : ' is'} rendered as a link line in the SMS/MMS body.`,
    });
  if (allReplies.length) warnings.push({ code: 'REPLIES_AS_TEXT', message: 'Suggested replies are rendered as a "Reply" line.' });
  let body = lines.join('\n');
  // The SMS protocol's smartEncoding: look-alikes mapped before the body is cut and counted (sms-segments.ts).
  if (channel === 'SMS' && settings.smartEncoding) body = smartEncode(body);
  if ([...body].length > MAX_SMS_BODY) {
    body = [...body].slice(0, MAX_SMS_BODY).join('');
    warnings.push({ code: 'TEXT_TRUNCATED', message: `The SMS/MMS body is cut at ${MAX_SMS_BODY} characters.` });
  }
  const billing = channel === 'MMS' ? perMessage(body) : textBilled(body, warnings);
  return {
    channel,
    body: body || null,
    title: null,
    mediaUrl: channel === 'MMS' ? mediaUrl : null,
    actions: [],
    replies: [],
    ...billing,
    warnings,
  };
}

function renderRich(channel: 'RCS' | 'CHATAPP', content: SendContent): Rendering {
  const warnings: Warning[] = [];
  let actions = actionsOf(content);
  let replies = repliesOf(content);
  if (channel === 'CHATAPP') {
    if (replies.length > CHATAPP_MAX_REPLIES || replies.some((r) => r.text.length > CHATAPP_REPLY_LENGTH) || actions.length > 1) {
      warnings.push({
        code: 'ACTIONS_TRUNCATED',
        message: `The chat-app channel carries at most ${CHATAPP_MAX_REPLIES} reply buttons of ${CHATAPP_REPLY_LENGTH} characters and 1 URL button.`,
      });
    }
    replies = replies.slice(0, CHATAPP_MAX_REPLIES).map((r) => ({ ...r, text: r.text.slice(0, CHATAPP_REPLY_LENGTH) }));
    actions = actions.slice(0, 1);
  }
  switch (content.type) {
    case 'text':
      return {
        channel,
        body: content.text,
        title: null,
        mediaUrl: null,
        actions,
        replies,
        ...textBilled(content.text, warnings),
        warnings,
      };
    case 'card':
      return {
        channel,
        body: content.text ?? null,
        title: content.title,
        mediaUrl: content.mediaUrl ?? null,
        actions,
        replies,
        ...perMessage(content.text ?? null),
        warnings,
      };
    case 'media':
      return {
        channel,
        body: content.text ?? null,
        title: null,
        mediaUrl: content.mediaUrl ?? null,
        actions,
        replies,
        ...perMessage(content.text ?? null),
        warnings,
      };
    case 'carousel':
      return { channel, body: null, title: null, mediaUrl: null, actions: [], replies: [], ...perMessage(null), warnings };
    case 'template': {
      const r = renderedTemplate(content);
      return {
        channel,
        body: r.text,
        title: r.title ?? null,
        mediaUrl: null,
        actions,
        replies,
        ...textBilled(templateText(content), warnings),
        warnings,
      };
    }
  }
}

export function render(channel: Channel, content: SendContent, settings: RenderSettings = {}): Rendering {
  if (channel === 'SMS' || channel === 'MMS') return renderSmsOrMms(channel, content, settings);
  return renderRich(channel, content);
}
