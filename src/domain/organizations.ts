// Creating a tenant: the organization, a key holding every scope and role, and an active sandbox sender
// (carrier simulator): an ordinary LONG_CODE sender on its own +1500… number (US), ACTIVE and send-ready, that
// sends SMS and MMS on the number and RCS through the sandbox's simulated RCS (openapi/schemas/sender-ids.yaml,
// `SenderIdType`). Used by the admin CLI and by tests.
import { randomInt } from 'node:crypto';
import { generateSecret } from '../auth/api-key-secret.ts';
import { inTransaction, type Db } from '../db/database.ts';
import { insertApiKey } from '../db/queries/api-keys/api-keys.ts';
import { allScopes, type OpenApiDocument } from '../contract/document.ts';
import { SANDBOX_THROUGHPUT } from './sender-ids/sending-rule.ts';

export type CreatedOrganization = {
  organizationId: string;
  apiKey: { id: string; secret: string };
  senderId: string;
};

export async function createOrganization(db: Db, doc: OpenApiDocument, name: string): Promise<CreatedOrganization> {
  return inTransaction(db, async (tx) => {
    const org = await tx.insertInto('organizations').values({ name }).returning('id').executeTakeFirstOrThrow();
    const secret = generateSecret();
    const key = await insertApiKey(tx, {
      organizationId: org.id,
      name: 'Owner key',
      prefix: secret.prefix,
      hash: secret.hash,
      scopes: allScopes(doc),
      expiresAt: null,
    });
    const sender = await insertSandboxSender(tx, org.id);
    return { organizationId: org.id, apiKey: { id: key.id, secret: secret.secret }, senderId: sender.id };
  });
}

async function insertSandboxSender(tx: Db, organizationId: string): Promise<{ id: string }> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const row = await tx
      .insertInto('sender_ids')
      .values({
        organization_id: organizationId,
        name: 'Sandbox sender',
        type: 'LONG_CODE',
        status: 'ACTIVE',
        provider: 'PROVIDER_A',
        phone_number: sandboxNumber(),
        country_code: 'US',
        is_sandbox: true,
        send_ready: true,
        throughput_per_second: SANDBOX_THROUGHPUT,
        activated_at: new Date(),
        updated_at: new Date(),
      })
      .onConflict((oc) => oc.column('phone_number').where('phone_number', 'is not', null).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (row) return row;
  }
  throw new Error('could not find a free sandbox number');
}

/** A sandbox sender's own number (+1 500 …, a range no real handset has): inbound messages find the
 * organization by the number they were sent to, so each sandbox sender gets a distinct one. */
function sandboxNumber(): string {
  return `+1500${String(randomInt(0, 10_000_000)).padStart(7, '0')}`;
}

export async function createApiKeyFor(
  db: Db,
  organizationId: string,
  name: string,
  scopes: string[],
  expiresAt: Date | null = null,
): Promise<{ id: string; secret: string; scopes: string[] }> {
  const secret = generateSecret();
  const key = await insertApiKey(db, { organizationId, name, prefix: secret.prefix, hash: secret.hash, scopes, expiresAt });
  return { id: key.id, secret: secret.secret, scopes: key.scopes };
}
