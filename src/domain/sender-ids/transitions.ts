// The sender lifecycle in one place (the sender-id paths of openapi.yaml: activate, suspend, reactivate, delete;
// openapi/schemas/sender-ids.yaml `SenderIdStatus`). The service (senders.ts) and the tests read this table;
// nothing else decides a sender's next status. PATCH never changes status; what it may edit per status is
// `EDITABLE` below.

export const SENDER_STATUSES = ['DRAFT', 'PENDING', 'ACTIVE', 'SUSPENDED', 'REJECTED', 'DEACTIVATED'] as const;
export type SenderStatus = (typeof SENDER_STATUSES)[number];

export const SENDER_ACTIONS = ['activate', 'suspend', 'reactivate', 'delete'] as const;
export type SenderAction = (typeof SENDER_ACTIONS)[number];

/** A condition a move needs besides the status; unmet → 409 INVALID_STATE naming it. */
type Guard = 'sendReady' | 'customerSuspension';

export type Transition =
  /** The status changes to `to` (when every guard holds). */
  | { kind: 'move'; to: SenderStatus; guards: readonly Guard[] }
  /** Already there: 200 with the sender as it is (idempotent). */
  | { kind: 'unchanged' }
  /** 409 INVALID_STATE; `hint` is what to do instead. */
  | { kind: 'refuse'; hint: string };

const move = (to: SenderStatus, ...guards: Guard[]): Transition => ({ kind: 'move', to, guards });
const unchanged: Transition = { kind: 'unchanged' };
const refuse = (hint: string): Transition => ({ kind: 'refuse', hint });

/** from-status × action → outcome. */
export const TRANSITIONS: Readonly<Record<SenderStatus, Readonly<Record<SenderAction, Transition>>>> = {
  DRAFT: {
    activate: refuse('submit it for registration first'),
    suspend: refuse('only an ACTIVE sender can be suspended'),
    reactivate: refuse('only a SUSPENDED sender can be reactivated'),
    delete: move('DEACTIVATED'),
  },
  PENDING: {
    activate: move('ACTIVE', 'sendReady'),
    suspend: refuse('only an ACTIVE sender can be suspended'),
    reactivate: refuse('only a SUSPENDED sender can be reactivated; use activate once it is send-ready'),
    delete: move('DEACTIVATED'),
  },
  ACTIVE: {
    activate: unchanged,
    suspend: move('SUSPENDED'),
    reactivate: unchanged,
    delete: move('DEACTIVATED'),
  },
  SUSPENDED: {
    activate: refuse('use reactivate'),
    suspend: unchanged,
    reactivate: move('ACTIVE', 'customerSuspension', 'sendReady'),
    delete: move('DEACTIVATED'),
  },
  REJECTED: {
    activate: refuse('edit it and submit it again'),
    suspend: refuse('only an ACTIVE sender can be suspended'),
    reactivate: refuse('only a SUSPENDED sender can be reactivated'),
    delete: move('DEACTIVATED'),
  },
  DEACTIVATED: {
    activate: refuse('a DEACTIVATED sender is final'),
    suspend: refuse('a DEACTIVATED sender is final'),
    reactivate: refuse('a DEACTIVATED sender is final'),
    delete: unchanged,
  },
};

export type SenderState = { status: string; sendReady: boolean; suspendedBy: string | null };

export type Decision = { ok: true; to: SenderStatus | null /* null: unchanged */ } | { ok: false; reason: string };

export function isSenderStatus(s: string): s is SenderStatus {
  return (SENDER_STATUSES as readonly string[]).includes(s);
}

/** What `action` does to a sender in `state`: the table, then its guards. */
export function decide(state: SenderState, action: SenderAction): Decision {
  if (!isSenderStatus(state.status)) return { ok: false, reason: `unknown status ${state.status}` };
  const t = TRANSITIONS[state.status][action];
  if (t.kind === 'unchanged') return { ok: true, to: null };
  if (t.kind === 'refuse') return { ok: false, reason: t.hint };
  for (const guard of t.guards) {
    if (guard === 'customerSuspension' && state.suspendedBy !== 'CUSTOMER') {
      return { ok: false, reason: `suspended by ${state.suspendedBy ?? 'an unknown party'}; it cannot be lifted through the API` };
    }
    if (guard === 'sendReady' && !state.sendReady) return { ok: false, reason: 'it is not send-ready' };
  }
  return { ok: true, to: t.to };
}

/** What PATCH may change per status (never the status itself). */
export const EDITABLE: Readonly<Record<SenderStatus, { name: boolean; registration: boolean }>> = {
  DRAFT: { name: true, registration: true },
  PENDING: { name: true, registration: false },
  ACTIVE: { name: true, registration: false },
  SUSPENDED: { name: true, registration: false },
  REJECTED: { name: true, registration: true },
  DEACTIVATED: { name: false, registration: false },
};

// ── Registry transitions (Submissions section) ───────────────────────────────────────────────────────────────
// What a registry or carrier outcome does to the sender, in one place. `submitted`: a submission, brand or
// campaign registration was handed over (a DRAFT or REJECTED sender waits as PENDING). `approved`: a sender
// submission was approved, or the sender's campaign is REGISTERED while it is attached to its program (PENDING →
// ACTIVE, send-ready). `rejected`: the submission or campaign was refused (PENDING → REJECTED). `suspended`: the
// carrier suspended an approved sender (ACTIVE → SUSPENDED, by CARRIER); `reinstated`: it lifted that suspension
// (SUSPENDED → ACTIVE; the caller asks only for a CARRIER suspension). Any other pair leaves the status as it is (null).
const REGISTRY_EVENTS = ['submitted', 'approved', 'rejected', 'suspended', 'reinstated'] as const;
export type RegistryEvent = (typeof REGISTRY_EVENTS)[number];

const REGISTRY_TRANSITIONS: Readonly<Partial<Record<SenderStatus, Partial<Record<RegistryEvent, SenderStatus>>>>> = {
  DRAFT: { submitted: 'PENDING' },
  REJECTED: { submitted: 'PENDING' },
  PENDING: { approved: 'ACTIVE', rejected: 'REJECTED' },
  ACTIVE: { suspended: 'SUSPENDED' },
  SUSPENDED: { reinstated: 'ACTIVE' },
};

/** The sender's next status after a registry event; null when it does not move. */
export function decideRegistry(status: string, event: RegistryEvent): SenderStatus | null {
  if (!isSenderStatus(status)) return null;
  return REGISTRY_TRANSITIONS[status]?.[event] ?? null;
}
// ── end registry transitions ─────────────────────────────────────────────────────────────────────────────────
