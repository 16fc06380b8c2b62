// The landing page state machine, as ONE table (openapi/schemas/common-section.yaml, LandingPageStatus):
// create → DRAFT; publish: DRAFT/UNPUBLISHED → PUBLISHED; unpublish: PUBLISHED → UNPUBLISHED;
// archive (PATCH status: ARCHIVED): DRAFT/UNPUBLISHED → ARCHIVED. Repeating publish on PUBLISHED or
// unpublish on UNPUBLISHED is a no-op (200); anything else is 409 INVALID_STATE.
import type { LandingPageState } from '../../db/tables/landing-pages.ts';
import { conflict } from '../errors.ts';

export type LandingPageAction = 'publish' | 'unpublish' | 'archive';

/** action → (from → to). A `from` state absent from an action's row is refused. */
const TRANSITIONS: Readonly<Record<LandingPageAction, Partial<Record<LandingPageState, LandingPageState>>>> = {
  publish: { DRAFT: 'PUBLISHED', UNPUBLISHED: 'PUBLISHED', PUBLISHED: 'PUBLISHED' },
  unpublish: { PUBLISHED: 'UNPUBLISHED', UNPUBLISHED: 'UNPUBLISHED' },
  archive: { DRAFT: 'ARCHIVED', UNPUBLISHED: 'ARCHIVED' },
};

/** The state after `action`, `changed: false` for the idempotent repeats; 409 INVALID_STATE when illegal. */
export function transition(from: LandingPageState, action: LandingPageAction): { to: LandingPageState; changed: boolean } {
  const to = TRANSITIONS[action][from];
  if (!to) throw conflict('INVALID_STATE', `A ${from} landing page cannot be ${action === 'archive' ? 'archived' : `${action}ed`}.`);
  return { to, changed: to !== from };
}
