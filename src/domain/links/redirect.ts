// The public redirect of a tracked link (GET {base}/l/{code}, src/http/links.ts): no API key, no tenant. A code is
// reachable only if the accepting statement stored it for a message (random, 64 bits per message), and it leads
// only to that message's own URL: nothing in the request chooses the destination, so it is no open redirect.
// Every request (GET or HEAD, any code) is limited per client address, before anything is read or counted: each
// GET writes a click, and a caller hammering the redirect would otherwise write one row per request.
import type { AppContext } from '../../app-context.ts';
import { clickLink, linkTarget } from '../../db/queries/messages/links.ts';
import { clientKey } from '../acquisition/client.ts';
import { consumeOrTooMany, sharedLimiter } from '../rate-limits.ts';
import { LINK_CODE } from './rewrite.ts';

/**
 * Requests per client address (an IPv6 address by its /64) per minute, across processes: a person taps a few links;
 * a carrier's or a mail host's link scanner behind one address opens a message's links at once, well under this.
 */
export const LINK_REDIRECT_LIMIT = { points: 60, durationSeconds: 60 };

/**
 * The original URL of a code, counting the click (`count`: a GET; a HEAD only looks), or undefined for a code that
 * is malformed or no message's. Past the client address's limit: 429 RATE_LIMITED with Retry-After, nothing counted.
 */
export async function followLink(
  app: Pick<AppContext, 'db' | 'pool'>,
  code: string,
  count: boolean,
  clientIp: string | null,
): Promise<string | undefined> {
  const limiter = sharedLimiter(app.pool, 'link-redirect-ip', LINK_REDIRECT_LIMIT.points, LINK_REDIRECT_LIMIT.durationSeconds);
  await consumeOrTooMany(limiter, clientKey(clientIp), 'link visits');
  if (!LINK_CODE.test(code)) return undefined;
  return count ? clickLink(app.db, code) : linkTarget(app.db, code);
}
