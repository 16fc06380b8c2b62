// The program lifecycle in one place (openapi/schemas/programs.yaml `ProgramStatus`): nothing else decides a
// program's next status. A program is ACTIVE exactly while it is ready (brand and campaign REGISTERED, an active
// PRIMARY attached, every attached sender active and compatible) and DRAFT while it is not, in both directions:
// a suspended campaign or a detached PRIMARY takes an ACTIVE program back to DRAFT, fixing it makes it ACTIVE
// again. ARCHIVED (POST /v1/programs/{id}/archive) is final.
import type { ProgramStatus } from '../../db/tables/enums.ts';

export type ProgramEvent = 'ready' | 'notReady' | 'archive';

const PROGRAM_TRANSITIONS: Readonly<Record<ProgramStatus, Partial<Record<ProgramEvent, ProgramStatus>>>> = {
  DRAFT: { ready: 'ACTIVE', archive: 'ARCHIVED' },
  ACTIVE: { notReady: 'DRAFT', archive: 'ARCHIVED' },
  ARCHIVED: {},
};

/** The program's next status after `event`; null when it does not move. */
export function decideProgram(status: ProgramStatus, event: ProgramEvent): ProgramStatus | null {
  return PROGRAM_TRANSITIONS[status][event] ?? null;
}
