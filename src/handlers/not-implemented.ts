// Operations documented in openapi.yaml but not built yet, by section: each answers 501 NOT_IMPLEMENTED.
// Remove an id here when its handler lands in src/handlers/<section>.ts. Start-up fails if an operation has
// neither a handler nor an entry here, or both. `npm run ops:status` lists both.
const pending: Record<string, readonly string[]> = {
  Common: [],
  Programs: [],
  Blasts: [],
  Bots: [],
  Dictionaries: [],
  Contacts: [],
  Compliance: [],
  Templates: [],
  Conversations: [],
  Analytics: [],
  Webhooks: [],
  'API Keys': [],
  Events: [],
  Submissions: [],
};

export const notImplementedOperations: readonly string[] = Object.values(pending).flat();
