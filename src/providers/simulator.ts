// The built-in carrier simulator: a deterministic sandbox like Twilio's magic numbers, so integrators and
// tests choose outcomes by phone number (rules in the README, "Carrier sandbox"):
//   last digit 0–4 → RCS capable; 5–9 → SMS/MMS only
//   …9999 → the capability lookup fails (provider error)
//   …0666 → accepted, then reported undeliverable
//   …0777 → refused at send (final failure)
//   …0503 → the first two send attempts fail with a transient error, the third is accepted
//   …0333 → an RCS message is not delivered (failed receipt), so the service falls back to SMS/MMS
//   …0444 → an RCS message is accepted and never delivered (no receipt): the service revokes it at its delivery
//           deadline and falls back to SMS/MMS (RCS_EXPIRED); the revoke succeeds
//   a revoke of an RCS message is too late once its final status has been reported (reported_at), as at a carrier
//   and, whatever the number, a share of sends fails transiently while the fault switch is on (simulator-faults.ts)
// It keeps what it accepted in simulator_messages (one row per dedupe key: a repeated send never reaches
// the handset twice) and reports receipts and inbound messages through the provider callback route, signed,
// like a real carrier — from a pg-boss job, so any worker process can deliver them.
import { QUEUES } from '../jobs/queue-names.ts';
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { JobQueue } from '../jobs/queue.ts';
import {
  NumberOrderUncertain,
  ProviderError,
  ProviderRejection,
  type CallbackParse,
  type CallbackRequest,
  type Channel,
  type InventoryNumber,
  type InventoryType,
  type MessagingProvider,
  type NumberCapability,
  type NumberOrder,
  type NumberSearchQuery,
  type OutboundMessage,
  type ProviderCallback,
  type ProviderName,
  type RcsTesterInvite,
  type SendOutcome,
  type SentMessageRef,
  type VoiceForwardingChange,
  type SenderHealthReport,
  type SenderHealthRequest,
  type ChatAppTemplateSubmission, // Templates section
} from './provider.ts';
import { checkCallbacks } from './callback-shape.ts';
import { inventoryRow, isInventoryNumber, matchInventory, orderOutcomeOf } from './simulator-inventory.ts';
import { SimulatorRegistry } from './simulator-registry.ts';
import { transientFaultRate } from './simulator-faults.ts';
import type { CallbackEndpoint } from './endpoint.ts';
import { runShared } from '../db/statement-scope.ts';

const SIMULATOR_CALLBACK_QUEUE = QUEUES.simulatorCallback;
/** The sandbox platform's review answers (submitChatAppTemplate). */
const TEMPLATE_REJECTION =
  'The template was rejected by the platform review: its content does not meet the messaging policy (sandbox: the name contains "reject").';
const TEMPLATE_PAUSE = 'The template was paused by the platform after recipients reported it (sandbox: the name contains "pause").';
const SECRET_SETTING = 'simulator_callback_secret';

function simulatedRcsCapable(phone: string): boolean {
  const last = Number(phone.at(-1));
  return last >= 0 && last <= 4;
}

const secrets = new WeakMap<Db, Promise<string>>();

/** The shared secret that signs simulator callbacks; created once, read by every process (cached per pool). */
export function simulatorSecret(db: Db): Promise<string> {
  let secret = secrets.get(db);
  if (!secret) {
    secret = runShared(() => loadSecret(db)); // shared by every later caller: not cancelled by the first one's client
    secrets.set(db, secret);
    secret.catch(() => secrets.delete(db));
  }
  return secret;
}

async function loadSecret(db: Db): Promise<string> {
  await db
    .insertInto('service_settings')
    .values({ key: SECRET_SETTING, value: randomBytes(32).toString('base64url') })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await db.selectFrom('service_settings').select('value').where('key', '=', SECRET_SETTING).executeTakeFirstOrThrow();
  return row.value;
}

export function signCallback(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

function validSignature(expectedHex: string, given: string | undefined): boolean {
  if (!given || !/^[0-9a-f]{64}$/.test(given)) return false;
  return timingSafeEqual(Buffer.from(expectedHex, 'hex'), Buffer.from(given, 'hex'));
}

/**
 * One callback job: the callbacks a carrier reports at the same time — the receipts of one accepted batch due at
 * once (delivered now, read a second later), or one inbound message. A job per receipt cost the database a job row
 * inserted, fetched, completed and purged per receipt, twice per message, beside the service it stands in for.
 * `delivery` is the one-callback form of jobs queued before.
 */
export type CallbackJob = { provider: ProviderName; deliveries?: ProviderCallback[]; delivery?: ProviderCallback };

/** Callbacks per POST: a carrier's batch, well inside the callback route's body limit. */
const CALLBACKS_PER_POST = 100;

export class CarrierSimulator implements MessagingProvider {
  readonly name: ProviderName;
  readonly kind = 'simulator' as const;
  readonly channels: ReadonlySet<Channel> = new Set<Channel>(['RCS', 'SMS', 'MMS', 'CHATAPP']);
  readonly registry = new SimulatorRegistry();
  private readonly db: Db | undefined;
  private readonly queue: JobQueue | undefined;
  private readonly endpoint: CallbackEndpoint;

  constructor(opts: { name?: ProviderName; db?: Db; queue?: JobQueue; endpoint?: CallbackEndpoint } = {}) {
    this.name = opts.name ?? 'PROVIDER_A';
    this.db = opts.db;
    this.queue = opts.queue;
    this.endpoint = opts.endpoint ?? { baseUrl: undefined };
  }

  /** Where callbacks go: the service's own base URL (set once the server listens). */
  get callbackBaseUrl(): string | undefined {
    return this.endpoint.baseUrl;
  }

  async checkRcsCapability(phone: string): Promise<{ rcsCapable: boolean }> {
    if (phone.endsWith('9999')) throw new ProviderError('simulated capability lookup failure');
    return { rcsCapable: simulatedRcsCapable(phone) };
  }

  async send(message: OutboundMessage): Promise<{ providerMessageId: string }> {
    const [outcome] = await this.sendBatch([message]);
    if (!outcome!.ok) throw outcome!.error;
    return { providerMessageId: outcome!.providerMessageId };
  }

  async sendBatch(messages: OutboundMessage[]): Promise<SendOutcome[]> {
    const db = this.requireDb();
    const faultRate = await transientFaultRate(db);
    const outcomes: Array<SendOutcome | undefined> = await Promise.all(
      messages.map(async (m): Promise<SendOutcome | undefined> => {
        if (m.to.endsWith('0777'))
          return { ok: false, error: new ProviderRejection('CARRIER_REJECTED', 'The carrier refused the destination number.') };
        // The operator's fault switch: this send fails, the carrier stays up (the rest of the batch goes through),
        // so it is no outage for the circuit breaker, as one 503 among accepted sends is not.
        if (faultRate > 0 && Math.random() < faultRate)
          return { ok: false, error: new ProviderError(`simulated transient carrier error (fault rate ${faultRate})`, { outage: false }) };
        if (m.to.endsWith('0503') && (await this.countTransientFailure(m.dedupeKey)) <= 2) {
          return { ok: false, error: new ProviderError('simulated transient carrier error (HTTP 503)') };
        }
        return undefined;
      }),
    );
    const accepted = messages.filter((_, i) => !outcomes[i]);
    if (accepted.length) {
      // One row per dedupe key: a repeated call returns the first acceptance and reaches no handset.
      const rows = await db
        .insertInto('simulator_messages')
        .values(
          accepted.map((m) => ({
            provider_message_id: `SIM${randomUUID().replaceAll('-', '')}`,
            organization_id: m.organizationId,
            provider: this.name,
            dedupe_key: m.dedupeKey,
            from_address: m.from,
            to_phone: m.to,
            channel: m.channel,
            body: m.body,
          })),
        )
        .onConflict((oc) => oc.column('dedupe_key').doUpdateSet({ send_calls: sql`simulator_messages.send_calls + 1` }))
        .returning(['dedupe_key', 'provider_message_id', 'send_calls'])
        .execute();
      const byKey = new Map(rows.map((r) => [r.dedupe_key, r]));
      const receipts: ReceiptItem[] = [];
      for (const m of accepted) {
        const row = byKey.get(m.dedupeKey)!;
        outcomes[messages.indexOf(m)] = { ok: true, providerMessageId: row.provider_message_id };
        if (row.send_calls === 1) receipts.push(...receiptsFor(m, row.provider_message_id));
      }
      if (receipts.length) await this.enqueue(receipts);
    }
    return outcomes as SendOutcome[];
  }

  async revoke({ providerMessageId }: SentMessageRef): Promise<boolean> {
    const db = this.requireDb();
    // Too late once the simulator has reported its final status (deliverSimulatorCallbacks sets reported_at in the
    // same row first): whichever of the two takes the row first decides, as at a carrier.
    const res = await db
      .updateTable('simulator_messages')
      .set({ revoked: true })
      .where('provider_message_id', '=', providerMessageId)
      .where('channel', '=', 'RCS')
      .where('reported_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  // --- Voice forwarding (Sender IDs section) ---
  // Magic destinations: …0502 → the provider refuses the forwarding (enable only); …0504 → the change is not
  // confirmed (timeout), enable or disable. Otherwise the setting is recorded in simulator_voice_forwardings.
  async syncVoiceForwarding(change: VoiceForwardingChange): Promise<{ confirmedAt: Date }> {
    if (change.enabled && change.destination.endsWith('0502'))
      throw new ProviderRejection('FORWARDING_REJECTED', 'The voice provider refused the forwarding destination.');
    if (change.destination.endsWith('0504'))
      throw new ProviderError('simulated voice provider timeout: the forwarding change was not confirmed');
    const confirmedAt = new Date();
    await this.requireDb()
      .insertInto('simulator_voice_forwardings')
      .values({
        sender_id: change.senderId,
        organization_id: change.organizationId,
        provider: this.name,
        number: change.number,
        destination: change.destination,
        enabled: change.enabled,
        updated_at: confirmedAt,
      })
      .onConflict((oc) =>
        oc.column('sender_id').doUpdateSet({
          provider: this.name,
          number: change.number,
          destination: change.destination,
          enabled: change.enabled,
          updated_at: confirmedAt,
        }),
      )
      .execute();
    return { confirmedAt };
  }

  // --- Numbers (Sender IDs section): inventory in simulator-inventory.ts, assignments in simulator_numbers ---
  async searchNumbers(query: NumberSearchQuery): Promise<InventoryNumber[]> {
    const rows = matchInventory(query);
    if (!rows.length) return [];
    const taken = new Set(
      (
        await this.requireDb()
          .selectFrom('simulator_numbers')
          .select('number')
          .where(
            'number',
            'in',
            rows.map((r) => r.number),
          )
          .execute()
      ).map((r) => r.number),
    );
    return rows.filter((r) => !taken.has(r.number));
  }

  async orderNumber(order: NumberOrder): Promise<void> {
    const row = inventoryRow(order.numberKey);
    if (!row || row.number !== order.number || row.provider !== order.provider || !row.purchasable) {
      throw new ProviderRejection('NUMBER_UNAVAILABLE', 'The number is not in the inventory.');
    }
    const outcome = orderOutcomeOf(row.number);
    if (outcome === 'refused') throw new ProviderRejection('ORDER_REFUSED', 'The provider refused the order.');
    const db = this.requireDb();
    const claimed = await db
      .insertInto('simulator_numbers')
      .values({
        number: row.number,
        provider: row.provider,
        organization_id: order.organizationId,
        order_key: order.orderKey,
        state: 'ASSIGNED',
      })
      .onConflict((oc) => oc.column('number').doNothing())
      .returning('number')
      .executeTakeFirst();
    if (!claimed) {
      const held = await db
        .selectFrom('simulator_numbers')
        .select(['order_key', 'state'])
        .where('number', '=', row.number)
        .executeTakeFirst();
      if (held?.order_key !== order.orderKey || held.state !== 'ASSIGNED')
        throw new ProviderRejection('NUMBER_UNAVAILABLE', 'The number is no longer available.');
    }
    // The order reached the carrier and was assigned, but the answer is lost: the caller cannot know.
    if (outcome === 'timeout') throw new NumberOrderUncertain('simulated order timeout', 'UNKNOWN');
  }

  async confirmNumberOwnership(request: {
    provider: ProviderName;
    organizationId: string;
    number: string;
    inventoryType: InventoryType;
  }): Promise<{ owned: boolean; capabilities: NumberCapability[] }> {
    if (request.number.endsWith('0502')) throw new ProviderError('simulated provider outage (number ownership lookup)');
    const owned = !request.number.endsWith('0422') && !isInventoryNumber(request.number) && !request.number.startsWith('+1500');
    return { owned, capabilities: ['SMS', 'MMS', 'VOICE'] };
  }

  async releaseNumber(request: {
    provider: ProviderName;
    organizationId: string;
    number: string;
    source: 'PURCHASED' | 'IMPORTED';
  }): Promise<void> {
    if (request.source !== 'PURCHASED') return; // an imported number stays in the customer's own account
    // Released numbers age: the sandbox never offers them again.
    await this.requireDb()
      .updateTable('simulator_numbers')
      .set({ state: 'RELEASED' })
      .where('number', '=', request.number)
      .where('organization_id', '=', request.organizationId)
      .execute();
  }
  // --- end of numbers ---

  /** An inbound message from a handset to one of the service's senders. */
  // --- Channel health and RCS testers (Sender IDs section, deprecated channels view) ---
  // Sandbox rules (README "Carrier sandbox"): a sender whose name ends in `-degraded` answers slowly (DEGRADED), one
  // ending in `-down` has its credentials refused (DOWN), one ending in `-unreachable` gets no answer (UNKNOWN).
  // A tester invite to a handset that is not RCS capable (last digit 5–9) FAILS; one to a number ending in `1111`
  // is accepted at once; any other is INVITED, and the handset answers a second later with a tester callback: one
  // ending in `2222` declines, one ending in `3333` never answers (stays INVITED), any other accepts.
  async checkSenderHealth(request: SenderHealthRequest): Promise<SenderHealthReport> {
    const name = request.name.toLowerCase();
    if (name.endsWith('-unreachable')) throw new ProviderError('simulated provider timeout: the health check got no answer');
    const down = name.endsWith('-down');
    const degraded = name.endsWith('-degraded');
    return {
      latencyMs: degraded ? 2400 : 40,
      degraded,
      checks: [{ name: 'credentials', ok: !down, message: down ? 'The provider refused the account credentials.' : null }],
    };
  }

  async inviteRcsTester(request: { organizationId: string; senderId: string; phone: string }): Promise<RcsTesterInvite> {
    if (!simulatedRcsCapable(request.phone)) return { status: 'FAILED', acceptedAt: null };
    if (request.phone.endsWith('1111')) return { status: 'ACCEPTED', acceptedAt: new Date() };
    if (!request.phone.endsWith('3333')) {
      const status = request.phone.endsWith('2222') ? ('DECLINED' as const) : ('ACCEPTED' as const);
      const at = new Date(Date.now() + 1000).toISOString();
      await this.enqueue([{ delivery: { type: 'tester', senderId: request.senderId, phone: request.phone, status, at }, delaySeconds: 1 }]);
    }
    return { status: 'INVITED', acceptedAt: null };
  }

  // --- BEGIN Templates section ---
  /**
   * Chat-app template review (README "Carrier sandbox"), by the template's name: one containing `upstream` cannot be
   * submitted (the platform is unreachable); otherwise it is accepted PENDING and answered one registry step later
   * through the callback route: `reject` → REJECTED with a reason; `pause` → APPROVED, then PAUSED one more step
   * later; anything else APPROVED. The sandbox keeps nothing: the answer is decided here and queued.
   */
  async submitChatAppTemplate(submission: ChatAppTemplateSubmission): Promise<{ providerTemplateId: string }> {
    if (submission.name.includes('upstream')) throw new ProviderError('The chat-app platform cannot be reached (sandbox).');
    const step = this.registry.stepMs / 1000;
    const answer = (status: 'APPROVED' | 'REJECTED' | 'PAUSED', reason: string | null, steps: number): ReceiptItem => ({
      delivery: {
        type: 'template',
        reference: submission.reference,
        status,
        reason,
        at: new Date(Date.now() + steps * step * 1000).toISOString(),
      },
      delaySeconds: steps * step,
    });
    const answers = submission.name.includes('reject')
      ? [answer('REJECTED', TEMPLATE_REJECTION, 1)]
      : submission.name.includes('pause')
        ? [answer('APPROVED', null, 1), answer('PAUSED', TEMPLATE_PAUSE, 2)]
        : [answer('APPROVED', null, 1)];
    await this.enqueue(answers);
    return { providerTemplateId: `SIMTPL${randomUUID().replaceAll('-', '')}` };
  }
  // --- END Templates section ---

  /**
   * The sandbox's callbacks: HMAC-SHA256 of the raw body (hex) in X-Provider-Signature, with the secret only this
   * service's processes know (simulatorSecret); a receipt, inbound message or tester answer, or a JSON array of them.
   */
  async parseCallback(request: CallbackRequest): Promise<CallbackParse> {
    const expected = signCallback(await simulatorSecret(this.requireDb()), request.rawBody);
    if (!validSignature(expected, request.headers['x-provider-signature'])) return { ok: false, status: 403, reason: 'bad signature' };
    let parsed: unknown;
    try {
      parsed = JSON.parse(request.rawBody);
    } catch {
      return { ok: false, status: 400, reason: 'not JSON' };
    }
    const checked = checkCallbacks(Array.isArray(parsed) ? parsed : [parsed]);
    return checked.ok ? { ok: true, callbacks: checked.callbacks } : { ok: false, status: 400, reason: checked.reason };
  }

  async injectInbound(inbound: {
    from: string;
    to: string;
    text: string | null;
    channel?: 'RCS' | 'SMS' | 'CHATAPP';
    postback?: string | null;
  }): Promise<string> {
    const providerMessageId = `SIMIN${randomUUID().replaceAll('-', '')}`;
    await this.enqueue([
      {
        delivery: {
          type: 'inbound',
          providerMessageId,
          from: inbound.from,
          to: inbound.to,
          channel: inbound.channel ?? (simulatedRcsCapable(inbound.from) ? 'RCS' : 'SMS'),
          text: inbound.text,
          postback: inbound.postback ?? null,
          at: new Date().toISOString(),
        },
      },
    ]);
    return providerMessageId;
  }

  private async countTransientFailure(dedupeKey: string): Promise<number> {
    const key = `simulator_503_${dedupeKey}`;
    const row = await this.requireDb()
      .insertInto('service_settings')
      .values({ key, value: '1' })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: sql`(service_settings.value::int + 1)::text` }))
      .returning('value')
      .executeTakeFirstOrThrow();
    return Number(row.value);
  }

  /** Queues callbacks in one insert: one job per due time, each sent as signed POSTs to the service. */
  private async enqueue(items: ReceiptItem[]): Promise<void> {
    if (!this.queue) throw new Error('carrier simulator has no job queue to deliver callbacks');
    const byDelay = Map.groupBy(items, (item) => item.delaySeconds ?? 0);
    await this.queue.insert(
      SIMULATOR_CALLBACK_QUEUE,
      [...byDelay].map(([delaySeconds, due]) => ({
        data: { provider: this.name, deliveries: due.map((item) => item.delivery) } satisfies CallbackJob,
        startAfter: new Date(Date.now() + delaySeconds * 1000),
        retryLimit: 10,
        retryDelay: 1,
        retryBackoff: true,
      })),
    );
  }

  private requireDb(): Db {
    if (!this.db) throw new Error('carrier simulator needs the database');
    return this.db;
  }
}

type ReceiptItem = { delivery: ProviderCallback; delaySeconds?: number };

/** What the carrier will report for an accepted message, by the magic-number rules above. */
function receiptsFor(message: OutboundMessage, providerMessageId: string): ReceiptItem[] {
  const base = { type: 'receipt' as const, providerMessageId, dedupeKey: message.dedupeKey, channel: message.channel };
  const at = new Date().toISOString();
  if (message.to.endsWith('0666'))
    return [{ delivery: { ...base, status: 'undeliverable', errorCode: 'UNREACHABLE', errorMessage: 'The handset is unreachable.', at } }];
  if (message.channel === 'RCS' && message.to.endsWith('0333')) {
    return [{ delivery: { ...base, status: 'failed', errorCode: 'UNREACHABLE', errorMessage: 'RCS delivery failed.', at } }];
  }
  if (message.channel === 'RCS' && message.to.endsWith('0444')) return []; // the handset never confirms it
  const receipts: ReceiptItem[] = [{ delivery: { ...base, status: 'delivered', at } }];
  if (message.channel === 'RCS') receipts.push({ delivery: { ...base, status: 'read', at }, delaySeconds: 1 });
  return receipts;
}

/**
 * Worker side: POST the jobs' callbacks to the service, signed as the provider signs them, CALLBACKS_PER_POST to a
 * request. A request that fails fails the jobs, which are retried whole: the service applies a repeated receipt
 * or inbound message once (statuses only move forward; inbound messages by their provider id).
 */
export async function deliverSimulatorCallbacks(db: Db, baseUrl: string, jobs: CallbackJob[]): Promise<void> {
  const callbacks = jobs.flatMap((j) =>
    (j.deliveries ?? (j.delivery ? [j.delivery] : [])).map((delivery) => ({ provider: j.provider, delivery })),
  );
  const receiptIds = callbacks.flatMap((c) => (c.delivery.type === 'receipt' ? [c.delivery.providerMessageId] : []));
  // A revoked message was withdrawn before delivery: the carrier reports nothing more for it. The others are marked
  // reported before their receipts go out (kept when a post fails and is retried: the handset has it), so a revoke
  // from then on is too late (revoke above); the row lock orders the two.
  const reported = receiptIds.length
    ? new Set(
        (
          await db
            .updateTable('simulator_messages')
            .set({ reported_at: sql`coalesce(reported_at, now())` })
            .where('provider_message_id', 'in', [...new Set(receiptIds)])
            .where('revoked', '=', false)
            .returning('provider_message_id')
            .execute()
        ).map((r) => r.provider_message_id),
      )
    : new Set<string>();
  const live = callbacks.filter((c) => c.delivery.type !== 'receipt' || reported.has(c.delivery.providerMessageId));
  const secret = await simulatorSecret(db);
  for (const [provider, ofProvider] of Map.groupBy(live, (c) => c.provider)) {
    for (let i = 0; i < ofProvider.length; i += CALLBACKS_PER_POST) {
      const body = JSON.stringify(ofProvider.slice(i, i + CALLBACKS_PER_POST).map((c) => c.delivery));
      const res = await fetch(`${baseUrl}/provider-callbacks/${provider}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-provider-signature': signCallback(secret, body) },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      if (!res.ok) throw new Error(`callback answered ${res.status}`);
    }
  }
}
