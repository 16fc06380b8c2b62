// A typed client in 20 lines: openapi-fetch over the generated types (README, "Integrating"; type-checked in CI).
import createClient from 'openapi-fetch';
import type { paths } from '../generated/api.d.ts';

const api = createClient<paths>({
  baseUrl: process.env.API_URL ?? 'http://localhost:3000',
  headers: { Authorization: `Bearer ${process.env.API_KEY}` },
});

export async function firstSend(phone: string): Promise<string> {
  const contact = await api.POST('/v1/contacts', { body: { phone } });
  if (contact.error) throw new Error(`${contact.error.code}: ${contact.error.message}`);
  const sent = await api.POST('/v1/messages/send', {
    params: { header: { 'Idempotency-Key': `welcome-${contact.data.id}` } }, // a retry never sends twice
    body: { contactId: contact.data.id, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Welcome!' } },
  });
  if (sent.error) throw new Error(`${sent.error.code}: ${sent.error.message}`);
  return sent.data.data.messageId;
}
