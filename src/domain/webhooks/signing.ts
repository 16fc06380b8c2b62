// Standard Webhooks signing (https://www.standardwebhooks.com): HMAC-SHA256 over "<id>.<timestamp>.<body>",
// keyed with the base64-decoded part of the `whsec_` secret. The same MAC goes out twice: base64 in
// `webhook-signature: v1,<mac>` (what standard verifier libraries read) and hex in `X-Signature: t=<ts>,v1=<mac>`.
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** `whsec_` + base64 of 24 random bytes (the documented format). */
export function generateWebhookSecret(): string {
  return PREFIX + randomBytes(24).toString('base64');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

export function signatureMac(secret: string, id: string, timestamp: number, body: string): Buffer {
  return createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest();
}

/** The headers of one signed attempt; `timestamp` is Unix seconds at signing time. */
export function signedHeaders(secret: string, id: string, body: string, timestamp = Math.floor(Date.now() / 1000)): Record<string, string> {
  const mac = signatureMac(secret, id, timestamp, body);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': `v1,${mac.toString('base64')}`,
    'x-signature': `t=${timestamp},v1=${mac.toString('hex')}`,
  };
}
