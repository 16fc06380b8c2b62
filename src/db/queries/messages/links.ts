// Tracked links (migration 0048): the accepting statement writes a message's links (accept.ts); the public
// redirect counts a click on a code and reads its URL here; blast stats sum them (blasts.ts engagement).
import { sql } from 'kysely';
import type { Db } from '../../database.ts';

/** The character after a message's token naming the link within the message (the index of its URL). */
export const LINK_INDEX_CHARACTERS = '0123456789abcdefghijklmnopqrstuvwxyz';

// System handle: the public redirect knows only the code, not its organization.
/**
 * The one cross-organization lookup of the public redirect (system handle): counts a click on the code and answers
 * its original URL, or undefined for a code no message has (nothing is counted then).
 */
export async function clickLink(db: Db, code: string): Promise<string | undefined> {
  const row = await sql<{ url: string }>`
    update message_links set clicks = clicks + 1, first_clicked_at = coalesce(first_clicked_at, now()), last_clicked_at = now()
    where code = ${code} returning url`.execute(db);
  return row.rows[0]?.url;
}

// System handle: the public redirect (HEAD) knows only the code, not its organization.
/** The code's original URL without counting (a HEAD request). */
export async function linkTarget(db: Db, code: string): Promise<string | undefined> {
  const row = await db.selectFrom('message_links').select('url').where('code', '=', code).executeTakeFirst();
  return row?.url;
}
