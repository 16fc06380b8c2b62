// Where event triggers come from. `POST /v1/events` runs every active trigger configured on the event's name;
// the resources that hold triggers (bots: their definition carries `triggers`) register a source here, so the
// Events section never depends on the Bots section and the Bots section plugs in without editing Events.
import type { Services, Tenant } from '../tenant.ts';

export type TriggeredEvent = {
  eventId: string;
  name: string;
  contactId: string;
  properties: Record<string, unknown>;
  occurredAt: Date;
  /** The request's `messageType` when it sent one (a trigger's own `messageType` applies otherwise). */
  messageType?: 'MARKETING' | 'TRANSACTIONAL' | 'SERVICE';
};

/** What one matching trigger did for one event (reported in `matchedTriggers`, `messages`, `skipped`). */
export type TriggerOutcome = {
  triggerId: string;
  /** The trigger's name as its source shows it (`matchedTriggers[].name`); the trigger id when absent. */
  name?: string;
  /** Messages accepted through the one send entry (messaging/send.ts), with their ids. */
  messageIds: string[];
  /** Why nothing was sent, when nothing was: DNC_LISTED, OPTED_OUT, NO_CONSENT, FREQUENCY_CAPPED … */
  skipped: Array<{ reason: string; message: string }>;
};

export type TriggerSource = {
  /** Runs, inside the event's transaction (`tenant.db`), every active trigger of this source matching the event. */
  run(tenant: Tenant, services: Services, event: TriggeredEvent): Promise<TriggerOutcome[]>;
};

const sources: TriggerSource[] = [];

export function registerTriggerSource(source: TriggerSource): void {
  sources.push(source);
}

export function triggerSources(): readonly TriggerSource[] {
  return sources;
}
