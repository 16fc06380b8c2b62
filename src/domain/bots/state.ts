// The bot status machine, as ONE transition table. Every status change of a bot goes through `transition()`.
//
//   from \ event   | editDraft (draft = published) | editDraft (draft ≠ published) | publish (valid draft)
//   DRAFT          | DRAFT                         | DRAFT                         | PUBLISHED
//   PUBLISHED      | PUBLISHED                     | MODIFIED                      | PUBLISHED (unchanged, 200)
//   MODIFIED       | PUBLISHED                     | MODIFIED                      | PUBLISHED
//
// A bot is created DRAFT. A publish of an invalid draft is refused (400 BOT_VALIDATION_FAILED) before the table is
// consulted, so no event leaves a bot in another state than the table says.
export type BotStatus = 'DRAFT' | 'PUBLISHED' | 'MODIFIED';
export type BotEvent = 'editMatchingPublished' | 'editDiffering' | 'publish';

export const TRANSITIONS: Readonly<Record<BotStatus, Readonly<Record<BotEvent, BotStatus>>>> = {
  DRAFT: { editMatchingPublished: 'DRAFT', editDiffering: 'DRAFT', publish: 'PUBLISHED' },
  PUBLISHED: { editMatchingPublished: 'PUBLISHED', editDiffering: 'MODIFIED', publish: 'PUBLISHED' },
  MODIFIED: { editMatchingPublished: 'PUBLISHED', editDiffering: 'MODIFIED', publish: 'PUBLISHED' },
};

export const INITIAL_STATUS: BotStatus = 'DRAFT';

export function transition(from: BotStatus, event: BotEvent): BotStatus {
  return TRANSITIONS[from][event];
}

/** Structural equality of two JSON values (object key order ignored). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => sameJson(v, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => sameJson(ao[k], bo[k]));
}
