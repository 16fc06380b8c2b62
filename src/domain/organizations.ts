// Creating a tenant: the organization, a key holding every scope and role, and an active sandbox sender
// (carrier simulator) able to send RCS, SMS and MMS. Used by the admin CLI and by tests.
import { generateSecret } from '../auth/api-key-secret.ts';
import { inTransaction, type Db } from '../db/database.ts';
import { insertApiKey } from '../db/queries/api-keys.ts';
import { allScopes, type OpenApiDocument } from '../http/document.ts';

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
    const sender = await tx
      .insertInto('sender_ids')
      .values({
        organization_id: org.id,
        name: 'Sandbox sender',
        type: 'RCS_AGENT',
        status: 'ACTIVE',
        provider: 'PROVIDER_A',
        phone_number: '+15005550000',
        is_sandbox: true,
        updated_at: new Date(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { organizationId: org.id, apiKey: { id: key.id, secret: secret.secret }, senderId: sender.id };
  });
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
