// The one check of what a provider's callback carries, whichever provider parsed it: every field this service
// stores or reads back is of the type and size it needs, so a malformed callback is refused (400, which the provider
// does not retry for ever) instead of throwing a 500 (retried for ever) or storing a value that breaks every later
// read of the conversation (an inbound `mediaUrl` that is not a URI: Message.content.mediaUrl is `format: uri`).
import { createRequire } from 'node:module';
import type { Ajv as AjvClass, ValidateFunction } from 'ajv';
import type addFormatsPlugin from 'ajv-formats';
import type { ProviderCallback } from './provider.ts';

const id = { type: 'string', minLength: 1, maxLength: 256 };
const channel = { enum: ['RCS', 'SMS', 'MMS', 'CHATAPP'] };
const at = { type: 'string', format: 'date-time', maxLength: 64 };
const nullableText = (maxLength: number) => ({ anyOf: [{ type: 'string', maxLength }, { type: 'null' }] });

const receipt = {
  type: 'object',
  required: ['type', 'providerMessageId', 'dedupeKey', 'status', 'channel', 'at'],
  properties: {
    type: { const: 'receipt' },
    providerMessageId: id,
    dedupeKey: id,
    status: { enum: ['delivered', 'read', 'failed', 'undeliverable'] },
    channel,
    providerFallback: { type: 'boolean' },
    errorCode: nullableText(64),
    errorMessage: nullableText(1000),
    at,
  },
};

const inbound = {
  type: 'object',
  required: ['type', 'providerMessageId', 'from', 'to', 'channel', 'text', 'at'],
  properties: {
    type: { const: 'inbound' },
    providerMessageId: id,
    from: { type: 'string', minLength: 1, maxLength: 64 },
    to: { type: 'string', minLength: 1, maxLength: 256 },
    channel,
    // Carriers join a long SMS before they post it; RCS texts are bounded by the platforms well below this.
    text: nullableText(10_000),
    postback: nullableText(2048),
    mediaUrl: { anyOf: [{ type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2048 }, { type: 'null' }] },
    at,
  },
};

const tester = {
  type: 'object',
  required: ['type', 'senderId', 'phone', 'status', 'at'],
  properties: {
    type: { const: 'tester' },
    senderId: { type: 'string', format: 'uuid' },
    phone: { type: 'string', minLength: 1, maxLength: 64 },
    status: { enum: ['ACCEPTED', 'DECLINED'] },
    at,
  },
};

const template = {
  type: 'object',
  required: ['type', 'reference', 'status', 'reason', 'at'],
  properties: {
    type: { const: 'template' },
    reference: { type: 'string', format: 'uuid' },
    status: { enum: ['APPROVED', 'REJECTED', 'PAUSED'] },
    reason: nullableText(1000),
    at,
  },
};

// Compiled on the first callback, not when the module loads: the server imports this module at start, and the
// compilation (an Ajv instance with its formats) was ~85 ms of CPU before the first /health (issue 38, bench part a).
// Ajv itself (63 modules, 26-39 ms of CPU) is required then too: checkCallbacks is synchronous, and both packages
// are CommonJS.
let compiled: Record<'receipt' | 'inbound' | 'tester' | 'template', ValidateFunction> | undefined;
function validators(): NonNullable<typeof compiled> {
  if (!compiled) {
    const require = createRequire(import.meta.url);
    const { Ajv } = require('ajv') as { Ajv: typeof AjvClass };
    const addFormats = require('ajv-formats') as typeof addFormatsPlugin;
    const ajv = new Ajv({ strict: false, allErrors: false });
    addFormats.default(ajv);
    compiled = {
      receipt: ajv.compile(receipt),
      inbound: ajv.compile(inbound),
      tester: ajv.compile(tester),
      template: ajv.compile(template),
    };
  }
  return compiled;
}

/** The first problem of a callback, in a line for the log and the 400 answer; null when it is well formed. */
function callbackProblem(callback: unknown): string | null {
  const type = (callback as { type?: unknown } | null)?.type;
  if (type !== 'receipt' && type !== 'inbound' && type !== 'tester' && type !== 'template')
    return 'not a callback: expected type receipt, inbound, tester or template';
  const validate = validators()[type];
  if (validate(callback)) return null;
  const e = validate.errors?.find((x) => x.keyword !== 'anyOf') ?? validate.errors?.[0];
  return `${type} ${e?.instancePath || ''} ${e?.message ?? 'is invalid'}`.replace(/\s+/g, ' ');
}

/** The callbacks when every one is well formed, else the first problem (with its index in a batch). */
export function checkCallbacks(callbacks: readonly unknown[]): { ok: true; callbacks: ProviderCallback[] } | { ok: false; reason: string } {
  for (const [i, c] of callbacks.entries()) {
    const problem = callbackProblem(c);
    if (problem) return { ok: false, reason: callbacks.length > 1 ? `callback ${i}: ${problem}` : problem };
  }
  return { ok: true, callbacks: callbacks as ProviderCallback[] };
}
