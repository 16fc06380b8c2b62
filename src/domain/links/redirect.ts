// The public redirect of a tracked link (GET {base}/l/{code}, src/http/links.ts): no API key, no tenant. A code is
// reachable only if the accepting statement stored it for a message (random, 64 bits per message), and it leads
// only to that message's own URL: nothing in the request chooses the destination, so it is no open redirect.
import type { AppContext } from '../../app-context.ts';
import { clickLink, linkTarget } from '../../db/queries/messages/links.ts';
import { LINK_CODE } from './rewrite.ts';

/**
 * The original URL of a code, counting the click (`count`: a GET; a HEAD only looks), or undefined for a code that
 * is malformed or no message's.
 */
export async function followLink(app: Pick<AppContext, 'db'>, code: string, count: boolean): Promise<string | undefined> {
  if (!LINK_CODE.test(code)) return undefined;
  return count ? clickLink(app.db, code) : linkTarget(app.db, code);
}
