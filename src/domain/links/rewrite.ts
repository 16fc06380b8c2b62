// Tracked links (`trackLinks` on a send or a blast): the URLs a message carries — in its text, each card's text,
// a media caption, and its `openUrl` actions — become `{base}/l/{code}` links on the service's public address
// (ASSET_BASE_URL). Pure computation inside the one send path (send.ts prepare): the content is rewritten once
// per distinct content with a placeholder in place of the per-message token; the accepting statement draws each
// message's random token, puts it in place of the placeholder and stores one message_links row per URL
// (src/db/queries/messages/accept.ts). A token has the placeholder's length and alphabet (base64url, GSM-7), so
// the segments and the price computed on the placeholder text are those of the text sent.
import { randomBytes } from 'node:crypto';
import { LINK_INDEX_CHARACTERS } from '../../db/queries/messages/links.ts';
import type { SendContent } from '../messaging/render.ts';

/** A code as the redirect accepts it: the token and the link's index character. */
export const LINK_CODE = /^[A-Za-z0-9_-]{11}[0-9a-z]$/;

/** An http(s) URL in text, up to whitespace or a character that cannot end it in prose (trimmed below). */
const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'`]+/gi;
const TRAILING = /[.,;:!?)\]}]+$/;

export type TrackedContent = {
  /** The content as sent, with `{base}/l/{placeholder}{index}` in place of each URL. */
  content: SendContent;
  /** The placeholder the statement replaces by each message's token. */
  placeholder: string;
  /** The original URLs, by index. */
  urls: string[];
};

/** The redirect address of a code (src/http/links.ts serves it). */
const linkUrl = (baseUrl: string, code: string): string => `${baseUrl.replace(/\/+$/, '')}/l/${code}`;

/**
 * The content with its URLs replaced by tracked links, or null when it carries none. The same URL twice is one
 * link; URLs beyond the 36th distinct one are left as they are.
 */
export function trackedContent(content: SendContent, baseUrl: string): TrackedContent | null {
  // A chat-app template is sent as the platform approved it: its text and links are not rewritten.
  if (content.type === 'template') return null;
  const stored = JSON.stringify(content);
  let placeholder = randomBytes(8).toString('base64url');
  // The placeholder must not occur in the content itself (it would be replaced too): draw again.
  while (stored.includes(placeholder)) placeholder = randomBytes(8).toString('base64url');
  const urls: string[] = [];
  const linkOf = (url: string): string => {
    let i = urls.indexOf(url);
    if (i < 0) {
      if (urls.length >= LINK_INDEX_CHARACTERS.length) return url;
      i = urls.push(url) - 1;
    }
    return linkUrl(baseUrl, placeholder + LINK_INDEX_CHARACTERS[i]);
  };
  const inText = (text: string): string =>
    text.replace(URL_IN_TEXT, (match) => {
      const trail = TRAILING.exec(match)?.[0] ?? '';
      const url = match.slice(0, match.length - trail.length);
      return linkOf(url) + trail;
    });
  const actions = <T extends { url: string }>(list: T[] | undefined): T[] | undefined => list?.map((a) => ({ ...a, url: linkOf(a.url) }));
  const withText = <T extends { text?: string; actions?: Array<{ text: string; url: string }> }>(c: T): T => ({
    ...c,
    ...(c.text !== undefined ? { text: inText(c.text) } : {}),
    ...(c.actions !== undefined ? { actions: actions(c.actions) } : {}),
  });
  const rewritten: SendContent = content.type === 'carousel' ? { ...content, cards: content.cards.map(withText) } : withText(content);
  return urls.length ? { content: rewritten, placeholder, urls } : null;
}
