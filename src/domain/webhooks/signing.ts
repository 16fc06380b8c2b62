// Standard Webhooks signing (https://www.standardwebhooks.com): HMAC-SHA256 over "<id>.<timestamp>.<body>",
// keyed with the base64-decoded part of the `whsec_` secret. The same MAC goes out twice: base64 in
// `webhook-signature: v1,<mac>` (what standard verifier libraries read) and hex in `X-Signature: t=<ts>,v1=<mac>`.
//
// At rest the secret is sealed (src/lib/secrets.ts): createEndpoint (endpoints.ts) seals it, deliver.ts opens it to sign, and
// sealStoredWebhookSecrets (start-up) seals rows written in plain text before migration 0008.
import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import type { Db } from '../../db/database.ts';
import * as q from '../../db/queries/webhooks/secrets.ts';
import { SecretDecryptionError, openSecret, sealSecret } from '../../lib/secrets.ts';

const PREFIX = 'whsec_';

/** `whsec_` + base64 of 24 random bytes (the documented format). */
export function generateWebhookSecret(): string {
  return PREFIX + randomBytes(24).toString('base64');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

function macWith(key: Buffer | KeyObject, id: string, timestamp: number, body: string): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
}

/** Signs attempts: the headers of one signed attempt; `timestamp` is Unix seconds at signing time. */
export type Signer = (id: string, body: string, timestamp?: number) => Record<string, string>;

/**
 * A signer for one secret. Preparing the HMAC key (a KeyObject) costs several times the MAC itself, so a caller
 * signing many bodies with one secret (a delivery batch, per endpoint) prepares it once.
 */
export function signerFor(secret: string): Signer {
  const key = createSecretKey(keyOf(secret));
  return (id, body, timestamp = Math.floor(Date.now() / 1000)) => {
    const mac = macWith(key, id, timestamp, body);
    return {
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': `v1,${mac.toString('base64')}`,
      'x-signature': `t=${timestamp},v1=${mac.toString('hex')}`,
    };
  };
}

/** The headers of one signed attempt; `timestamp` is Unix seconds at signing time. */
export function signedHeaders(secret: string, id: string, body: string, timestamp?: number): Record<string, string> {
  return signerFor(secret)(id, body, timestamp);
}

/**
 * Start-up, after migrations: seals every webhook secret still stored in plain text (idempotent: sealed rows carry
 * the `v1:` prefix and are left alone; concurrent starters each seal a row at most once), then validates the
 * constraint of migration 0008 and checks that the newest sealed secret opens with this process's key. A key that
 * does not open it stops the start: deliveries would otherwise all fail, and endpoints created now would be
 * unreadable by the other processes.
 */
export async function sealStoredWebhookSecrets(db: Db, key: Buffer): Promise<{ sealed: number }> {
  let sealed = 0;
  for (let after: string | null = null; ;) {
    const plain = await q.plainSecrets(db, after, 500);
    if (!plain.length) break;
    sealed += await q.replacePlainSecrets(
      db,
      plain.map((r) => ({ id: r.id, plain: r.secret, sealed: sealSecret(r.secret, key) })),
    );
    after = plain.at(-1)!.id;
  }
  await q.validateSealedSecretsConstraint(db);
  const sample = await q.newestSealedSecret(db);
  if (sample !== undefined) {
    try {
      openSecret(sample, key);
    } catch (error) {
      if (!(error instanceof SecretDecryptionError)) throw error;
      throw new Error(
        'Webhook signing secrets in this database were sealed with another key than this process has. Set SECRETS_KEY to the ' +
          'key of the processes that created them (the same value on every process sharing the database; without SECRETS_KEY ' +
          'a process uses DATA_DIR/secrets.key). If that key is lost, those endpoints must be deleted and created again.',
      );
    }
  }
  return { sealed };
}
