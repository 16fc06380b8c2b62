// What an event hands to the triggers it runs, and what each trigger did. The bots hold every event trigger
// (their definition carries `triggers`); events.ts calls them directly (bots/triggers.ts runBotTriggers), so a
// process that loads the Events section always runs them: no registry filled by import side effects.

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
