// Where providers post their callbacks: the service's own public base URL, shared by every provider of a process.
// CALLBACK_BASE_URL, or (when unset) the address the server listens on, filled in once it listens (src/server.ts).

export type CallbackEndpoint = { baseUrl: string | undefined };

/** The callback URL of a slot: `<base>/provider-callbacks/<slot>`. Throws while the base is unknown. */
export function callbackUrl(endpoint: CallbackEndpoint, slot: string): string {
  if (!endpoint.baseUrl) throw new Error('no callback base URL yet (CALLBACK_BASE_URL, or the server has not started listening)');
  return `${endpoint.baseUrl}/provider-callbacks/${slot}`;
}
