// The blast state machine: ONE table, the document's (openapi/schemas/blasts.yaml, BlastStatus). Every state
// change goes through `assertTransition`; an action not allowed in the current state answers 409 INVALID_STATE
// naming the state. `allowedActions` (BlastDetail) is derived from the same table.
import { conflict } from '../errors.ts';

export type BlastStatus = 'DRAFT' | 'SCHEDULED' | 'SENDING' | 'DISPATCHED' | 'SENT' | 'FAILED' | 'CANCELLED';

/** Client actions and system events that move (or, for `update`/`delete`/`test`, only need) a state. */
export type BlastAction =
  | 'update' // PUT on the blast, its content, its audience (state unchanged)
  | 'delete'
  | 'test' // any state, state unchanged
  | 'launchNow'
  | 'launchScheduled'
  | 'send'
  | 'schedule'
  | 'cancel'
  | 'start' // system: scheduledAt reached
  | 'dispatched' // system: every message handed to the dispatcher
  | 'complete' // system: every message final, or 72 h after DISPATCHED
  | 'fail'; // system: the start failed wholesale

const ALL: readonly BlastStatus[] = ['DRAFT', 'SCHEDULED', 'SENDING', 'DISPATCHED', 'SENT', 'FAILED', 'CANCELLED'];

/** action → the states it is allowed from → the state it leads to (null: unchanged / removed). */
export const TRANSITIONS: Readonly<Record<BlastAction, { from: readonly BlastStatus[]; to: BlastStatus | null }>> = {
  update: { from: ['DRAFT', 'SCHEDULED'], to: null },
  delete: { from: ['DRAFT'], to: null },
  test: { from: ALL, to: null },
  launchScheduled: { from: ['DRAFT'], to: 'SCHEDULED' },
  launchNow: { from: ['DRAFT'], to: 'SENDING' },
  send: { from: ['DRAFT', 'SCHEDULED'], to: 'SENDING' },
  schedule: { from: ['DRAFT', 'SCHEDULED'], to: 'SCHEDULED' },
  start: { from: ['SCHEDULED'], to: 'SENDING' },
  dispatched: { from: ['SENDING'], to: 'DISPATCHED' },
  complete: { from: ['DISPATCHED'], to: 'SENT' },
  fail: { from: ['SCHEDULED', 'SENDING'], to: 'FAILED' },
  cancel: { from: ['SCHEDULED', 'SENDING', 'DISPATCHED'], to: 'CANCELLED' },
};

function canDo(action: BlastAction, status: string): boolean {
  return TRANSITIONS[action].from.includes(status as BlastStatus);
}

const VERBS: Record<BlastAction, string> = {
  update: 'changed',
  delete: 'deleted',
  test: 'tested',
  launchNow: 'launched',
  launchScheduled: 'launched',
  send: 'sent',
  schedule: 'scheduled',
  cancel: 'cancelled',
  start: 'started',
  dispatched: 'dispatched',
  complete: 'completed',
  fail: 'failed',
};

/** The target state of `action` from `status`, or 409 INVALID_STATE naming the current state. */
export function assertTransition(action: BlastAction, status: string): BlastStatus | null {
  const t = TRANSITIONS[action];
  if (!t.from.includes(status as BlastStatus)) {
    throw conflict('INVALID_STATE', `The blast is ${status}; it can be ${VERBS[action]} only when ${t.from.join(' or ')}.`);
  }
  return t.to;
}

/** The document's `allowedActions` for a state. */
export function allowedActions(status: string): Array<'update' | 'delete' | 'test' | 'launch' | 'send' | 'schedule' | 'cancel'> {
  const out: Array<'update' | 'delete' | 'test' | 'launch' | 'send' | 'schedule' | 'cancel'> = [];
  if (canDo('update', status)) out.push('update');
  if (canDo('delete', status)) out.push('delete');
  out.push('test');
  if (canDo('launchNow', status)) out.push('launch');
  if (canDo('send', status)) out.push('send');
  if (canDo('schedule', status)) out.push('schedule');
  if (canDo('cancel', status)) out.push('cancel');
  return out;
}
