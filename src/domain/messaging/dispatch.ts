// Dispatch: hands accepted messages to the provider, at least once, never twice to the handset.
//
// The message row is its own outbox (`dispatch_at`, migration 0025): a wake job (pg-boss) names a scope — the
// messages of one send, or of one blast batch — and the worker claims that scope's due rows in batches with
// FOR UPDATE SKIP LOCKED (queued/held/sending → sending, one more attempt, leased for a few seconds). A worker
// that dies after claiming leaves its rows `sending` until the lease runs out; pg-boss redelivers the wake job,
// the rows are claimed again, and the provider's dedupe key (the message id) turns the repeated send into a no-op
// at the carrier. What is not due yet (held for quiet hours, backing off, over the sender's rate, leased to
// another worker) gets one wake job for the scope at the earliest `dispatch_at`, so nothing is stranded and
// there is no job row per message. Quiet hours are checked again at the claim: a MARKETING message whose
// recipient's quiet period began while it waited goes back to `held` until it ends (holdInQuietHours). Per-sender
// throughput is enforced with rate-limiter-flexible's PostgreSQL store, shared by every worker process, consumed
// once per sender per claimed batch; what does not fit waits for the next window (never dropped). A provider's
// outage (5xx, timeout, no answer) and its rate limit cost no attempt: the message waits, retried with backoff, until
// its validity period ends (outageWaitEnds), then fails PROVIDER_UNAVAILABLE with the provider's reason. Other
// transient errors are retried with exponential backoff and jitter up to MAX_ATTEMPTS; then, or on a final refusal,
// the message fails with a reason (and, when no carrier ever accepted it, without the fallback it had planned:
// fallback.ts).
//
// A worker across organizations: it uses the system handle (AppContext.db).
import { setTimeout as sleep } from 'node:timers/promises';
import { fromKysely } from 'pg-boss';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { sharedLimiter } from '../rate-limits.ts';
import type { AppContext } from '../../app-context.ts';
import { inTransaction, type Db } from '../../db/database.ts';
import * as contacts from '../../db/queries/conversations/contacts.ts';
import { fallbackSenderFacts } from '../../db/queries/messages/accept.ts';
import * as q from '../../db/queries/messages/dispatch.ts';
import type { MessageRow } from '../../db/queries/messages/messages.ts';
import { sendersByIds, type SenderRow } from '../../db/queries/sender-ids/senders.ts';
import { protocolsOfSendersAnyOrganization } from '../../db/queries/sender-ids/protocols.ts';
import {
  channelsOf,
  expired,
  fallbackCarrier,
  sendSettingsOf,
  DEFAULT_VALIDITY_PERIOD_SECONDS,
  type FallbackSenderFacts,
  type SendingDecision,
  type SendSettings,
} from '../sender-ids/sending-rule.ts';
import { QUEUES } from '../../jobs/queue-names.ts';
import { jobInsertOf, type JobInsert, type JobQueue } from '../../jobs/queue.ts';
import {
  ProviderAuthFailed,
  ProviderError,
  ProviderRateLimited,
  ProviderRejection,
  type MessagingProvider,
  type ProviderName,
  type SendOutcome,
} from '../../providers/provider.ts';
import { QUIET_DEFAULTS, quietHoldsOfContacts, quietHoursApply } from '../compliance/gate.ts';
import { emitEvent, emitEvents } from '../webhooks/events.ts';
import { tenantFor } from '../tenant.ts';
import { queueOf } from './context.ts';
import { previewOfRendering } from './conversation.ts';
import { dedupeKeyOf, dropsFallbackOnEnd, fallbackCause, followFallbackMoves, notReadyText } from './fallback.ts';
import { messageEvent } from './message-events.ts';
import { scheduleRcsExpiry } from './rcs-expiry.ts';
import { fallbackChannelFor, render, type Channel, type Rendering, type SendContent } from './render.ts';
import { MMS_CARRIER_MAX_BYTES } from '../assets/images.ts';
import { CARRIER_VARIANT, linkExpiry, MESSAGE_LINK_TTL_MS, variantLink } from '../assets/links.ts';
import { mmsSource } from '../assets/media.ts';

export const DISPATCH_QUEUE = QUEUES.messageDispatch;
const MAX_ATTEMPTS = 6;
/**
 * How long a message waits out a provider outage when its sender sets no validity period (no protocol rows): the
 * setting's default and maximum (4 hours), so an outage never keeps a message forever.
 */
const OUTAGE_WAIT_SECONDS = DEFAULT_VALIDITY_PERIOD_SECONDS;
/** Retry backoff base and a claim's lease (a dead worker's rows are claimed again after it); tests shorten them. */
export const dispatchTuning = { backoffBaseSeconds: 2, leaseSeconds: 10 };
/** Rows claimed per statement: a send's scope (its messages, any senders). */
const CLAIM_LIMIT = 500;
/**
 * Rows claimed per statement in a blast batch's scope, within its sender's rate (a sender at 100 a second claims 100):
 * a whole batch (blasts/sending.ts, 5,000) at once. Every claim of a scope reads the whole batch's recipient rows and
 * their messages to find the due ones, and pays the per-batch work after it (senders, protocols, limiter, the
 * provider's and the recording statements): claimed 500 at a time, a batch of 5,000 was read ten times over.
 */
const BLAST_CLAIM_LIMIT = 5000;
/**
 * Blast batches drained side by side within one fetch of wake jobs. A fetch takes every wake job queued (up to the
 * queue's batch size, 200), and a blast queues one per batch as it accepts them, faster than one batch is handed
 * over: drained one after another, a 1,000,000-recipient blast's backlog went through one batch at a time in one
 * worker while the queue's other worker found nothing left to fetch, and the database and the carrier waited on
 * each other's round trips (bench part l: 1.35 of 2 cores busy). Each batch is its own scope (its own rows, claimed
 * with SKIP LOCKED and leased), so two at once hand each message over once, as two workers do.
 */
const BLAST_SCOPES_AT_ONCE = 2;
/**
 * How many of its sender's rate windows a blast batch waits for in its drain when other batches took the window and
 * the sender's rate covers the whole batch (throughput ≥ BLAST_CLAIM_LIMIT). Every claim of a batch reads all of it
 * (nextDue after it too): with two batches drained side by side in each of two workers, a sender at 10,000 a second
 * is asked for 5,000 four times in a window, and a batch claimed in part would be woken again for the rest and read
 * twice. In a 200,000-recipient blast (bench part l) 16 of 40 batches found their window taken; each waited, then was
 * claimed whole. A slower sender's batch takes what its window allows and wakes for the rest, as before.
 */
const WINDOW_WAITS = 5;

/** A wake job: the messages of one send (by id), or of one blast batch (with the blast's sender: drain). */
export type DispatchJob = { messageId?: string; messageIds?: string[]; blast?: q.BlastBatchScope };

/** One limiter per throughput value (points per 1-second window), keyed by sender id. */
const limiterFor = (app: AppContext, perSecond: number) => sharedLimiter(app.pool, `sender-mps-${perSecond}`, perSecond, 1);

/** How many of `wanted` messages this sender may send now, and when the rest may go (seconds). */
async function admit(app: AppContext, sender: SenderRow, wanted: number): Promise<{ allowed: number; retryAfterSeconds: number }> {
  const limiter = limiterFor(app, sender.throughput_per_second);
  try {
    await limiter.consume(sender.id, wanted);
    return { allowed: wanted, retryAfterSeconds: 0 };
  } catch (res) {
    if (!(res instanceof RateLimiterRes)) throw res;
    const before = res.consumedPoints - wanted;
    const allowed = Math.max(0, Math.min(wanted, sender.throughput_per_second - before));
    if (wanted - allowed > 0) await limiter.reward(sender.id, wanted - allowed); // only the admitted ones count
    return { allowed, retryAfterSeconds: Math.max(0.05, res.msBeforeNext / 1000) }; // the next window, not a rounded second
  }
}

type Claimed = q.ClaimedMessage;
type Accepted = {
  provider: ProviderName;
  message: Claimed;
  channel: Channel;
  providerMessageId: string;
  segments: number;
  encoding: string | null;
  costUnits: number;
};

/** Queues the wake job of a scope, in the caller's transaction when given one: it runs at `at` (now when absent or past). */
async function wakeDispatch(queue: JobQueue, scope: DispatchJob, opts: { db?: Db; at?: Date | null } = {}): Promise<void> {
  await queue.send(DISPATCH_QUEUE, scope, {
    ...(opts.db ? { db: fromKysely(opts.db) } : {}),
    ...(opts.at && opts.at.getTime() > Date.now() ? { startAfter: opts.at } : {}),
  });
}

/** The dispatch queue's JobInsert, for a send to queue its wake job inside its accepting statement (accept.ts). */
export async function wakeInsertOf(queue: JobQueue): Promise<JobInsert> {
  const insert = await jobInsertOf(queue, DISPATCH_QUEUE);
  if (!insert) throw new Error('the dispatch queue runs no SQL: sends need a pg-boss queue');
  return insert;
}

type Nudge = { timer: NodeJS.Timeout | undefined; last: number };
const nudges = new WeakMap<JobQueue, Nudge>();
/** At most one nudge per this many milliseconds and process: a busy API process sends a few, not one per send. */
const NUDGE_INTERVAL_MS = 10;

/**
 * Wakes the listening dispatch workers after a send committed its wake job without a NOTIFY of its own (accept.ts:
 * a NOTIFY in a transaction holds a database-wide lock until its commit is flushed, so notifying sends commit one at
 * a time). Coalesced: the sends of the same few milliseconds share one NOTIFY, sent once they committed. Best effort
 * by design: a lost one costs latency only, as workers also poll for due jobs every second (jobs/workers.ts).
 */
export function nudgeDispatchWorkers(queue: JobQueue, wake: JobInsert): void {
  if (!wake.notify) return;
  let state = nudges.get(queue);
  if (!state) nudges.set(queue, (state = { timer: undefined, last: 0 }));
  if (state.timer) return; // the nudge already due covers this send too
  const nudge = state;
  nudge.timer = setTimeout(
    () => {
      nudge.timer = undefined;
      nudge.last = Date.now();
      queue
        .getDb()
        .executeSql(`select ${wake.notify}`)
        .catch(() => {});
    },
    Math.max(0, nudge.last + NUDGE_INTERVAL_MS - Date.now()),
  );
  nudge.timer.unref();
}

/**
 * Runs fetched wake jobs: each scope drained of its due messages, the rest woken again when due. The messages named
 * by id are drained CLAIM_LIMIT ids at a time: a claim looks up every id of its scope, so one scope of all the jobs'
 * ids (a fetch holds up to 200 jobs) was looked up in full by each of its claims of CLAIM_LIMIT.
 */
export async function dispatchBatch(app: AppContext, jobs: Array<{ data: DispatchJob }>): Promise<void> {
  const ids = [...new Set(jobs.flatMap((j) => j.data.messageIds ?? (j.data.messageId ? [j.data.messageId] : [])))];
  for (let i = 0; i < ids.length; i += CLAIM_LIMIT) await drain(app, { messageIds: ids.slice(i, i + CLAIM_LIMIT) });
  const blasts = jobs.flatMap((j) => (j.data.blast ? [j.data.blast] : []));
  let next = 0;
  const lanes = Array.from({ length: Math.min(BLAST_SCOPES_AT_ONCE, blasts.length) }, async () => {
    while (next < blasts.length) await drain(app, blasts[next++]!);
  });
  // Every lane runs to its end before the jobs are settled: a failed one must not leave the other draining while
  // pg-boss already retries the fetch.
  const failed = (await Promise.allSettled(lanes)).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * Drains a scope of its due messages. A blast batch has one sender, whose rate is asked before claiming: what it may
 * not send in this window stays queued, untouched, and the scope wakes when the window opens. (Claimed first and
 * put back, each such row was written twice per window for nothing: at a carrier's 100 messages a second, 400 of
 * every 500 claimed.) A send's scope (its few messages, any senders) is claimed first and admitted per sender.
 */
async function drain(app: AppContext, scope: q.DispatchScope): Promise<void> {
  const sender = 'senderId' in scope && scope.senderId ? (await sendersByIds(app.db, [scope.senderId]))[0] : undefined;
  let windowOpens: Date | undefined;
  const wanted = sender ? BLAST_CLAIM_LIMIT : CLAIM_LIMIT;
  let waits = 0;
  for (;;) {
    let limit = wanted;
    if (sender) {
      const { allowed, retryAfterSeconds } = await admit(app, sender, wanted);
      if (allowed < wanted && sender.throughput_per_second >= wanted && waits < WINDOW_WAITS) {
        // The sender's rate covers the whole batch: other batches took this window. Its next one is at most a second
        // away; waited for here, the batch is claimed whole then, not partly now and the rest after a wake job.
        if (allowed > 0) await limiterFor(app, sender.throughput_per_second).reward(sender.id, allowed);
        waits++;
        await sleep(retryAfterSeconds * 1000);
        continue;
      }
      if (allowed < wanted) windowOpens = new Date(Date.now() + retryAfterSeconds * 1000);
      if (allowed === 0) break;
      limit = allowed;
    }
    const claimed = await q.claimDue(app.db, scope, limit, dispatchTuning.leaseSeconds, QUIET_DEFAULTS);
    if (sender && claimed.length < limit) await limiterFor(app, sender.throughput_per_second).reward(sender.id, limit - claimed.length);
    const { limited, moved } = claimed.length ? await sendClaimed(app, claimed, sender) : { limited: false, moved: 0 };
    // Over a sender's rate, the rest waits for its window (the wake below) instead of being claimed in vain. Messages
    // moved to their fallback sender are due again at once: claimed again now, with that sender.
    if (limited || windowOpens || (claimed.length < limit && moved === 0)) break;
    // Every message of the scope claimed: none is left to claim now (one moved to its fallback sender is due again).
    if ('messageIds' in scope && claimed.length === scope.messageIds.length && moved === 0) break;
    // A blast batch is claimed whole (BLAST_CLAIM_LIMIT is its size): a full claim does not say whether anything is
    // left, and claiming again to find out would read the whole batch once more. nextDue below answers it, and a
    // scope with messages due now (moved to their fallback sender) is woken again at once.
    if (sender) break;
  }
  // A blast batch with only a few messages left (a carrier's 503 to retry, a quiet hour) is woken for them by id:
  // their claim then reads them alone, not the batch's 5,000 recipients and messages again. Only as many as its
  // sender may send in one window, and not while its rate holds the batch back: a claim by id admits after claiming,
  // and what a window cannot take would be claimed and put back.
  const few = sender && !windowOpens ? Math.min(CLAIM_LIMIT, sender.throughput_per_second) : 0;
  const next = await q.nextDue(app.db, scope, few);
  if (next) {
    const at = windowOpens && windowOpens > next.at ? windowOpens : next.at;
    const wake = 'messageIds' in scope ? { messageIds: scope.messageIds } : next.ids ? { messageIds: next.ids } : { blast: scope };
    await wakeDispatch(queueOf(app), wake, { at });
  }
}

/**
 * Sends claimed messages, each sender within its rate (`admitted`: a sender whose messages were admitted before
 * they were claimed); answers whether a sender's rate held some back, and how many moved to their fallback sender.
 */
async function sendClaimed(app: AppContext, claimed: Claimed[], admitted?: SenderRow): Promise<{ limited: boolean; moved: number }> {
  const ids = [...new Set(claimed.map((m) => m.sender_id))];
  const [rows, protocols] = await Promise.all([sendersByIds(app.db, ids), protocolsOfSendersAnyOrganization(app.db, ids)]);
  const senders = new Map(rows.map((s) => [s.id, s]));
  const settings = new Map(ids.map((id) => [id, sendSettingsOf(protocols.filter((p) => p.sender_id === id))]));
  const live = await failOutlived(app, claimed, senders, settings);
  const due = await holdInQuietHours(app, live, senders);
  // A held or expired message takes none of its sender's throughput, nor one of another sender (moved to its
  // fallback sender earlier, admitted at that sender's rate below): what drain admitted for it is given back.
  const ownDue = admitted ? due.filter((m) => m.sender_id === admitted.id).length : 0;
  if (admitted && ownDue < claimed.length)
    await limiterFor(app, admitted.throughput_per_second).reward(admitted.id, claimed.length - ownDue);

  const senderIds = [...new Set(due.map((m) => m.sender_id))];
  const accepted: Accepted[] = [];
  let limited = false;
  let moved = 0;
  await Promise.all(
    senderIds.map(async (senderId) => {
      const sender = senders.get(senderId)!;
      const usable = channelsOf(
        sender,
        protocols.filter((p) => p.sender_id === senderId),
      );
      const mine = due.filter((m) => m.sender_id === senderId);
      const { allowed, retryAfterSeconds } =
        senderId === admitted?.id ? { allowed: mine.length, retryAfterSeconds: 0 } : await admit(app, sender, mine.length);
      const later = mine.slice(allowed);
      if (later.length) {
        limited = true;
        await requeue(app, later, retryAfterSeconds, false);
      }
      const sent = await sendBatch(app, mine.slice(0, allowed), sender, { settings: settings.get(senderId)!, usable });
      accepted.push(...sent.accepted);
      // A message moved to its fallback sender did not go from this one: its throughput is given back.
      if (sent.moved) await limiterFor(app, sender.throughput_per_second).reward(sender.id, sent.moved);
      moved += sent.moved;
    }),
  );
  await recordAccepted(app, accepted, senders, settings);
  return { limited, moved };
}

/**
 * The sender's protocol `validityPeriodSeconds`, checked as messages are claimed: one that waited longer than its
 * planned channel allows (held for quiet hours, behind the sender's rate, retrying) fails `EXPIRED` with its
 * `message.failed`, unsent and unbilled. Answers the messages still to send.
 */
async function failOutlived(
  app: AppContext,
  claimed: Claimed[],
  senders: Map<string, SenderRow>,
  settings: Map<string, SendSettings>,
): Promise<Claimed[]> {
  const now = new Date();
  const outlived = claimed.filter((m) => m.planned_channel && expired(settings.get(m.sender_id)!, m.planned_channel, m.created_at, now));
  if (outlived.length === 0) return claimed;
  for (const m of outlived) {
    const seconds = settings.get(m.sender_id)!.validitySeconds(m.planned_channel as Channel);
    const sender = senders.get(m.sender_id)!;
    // Its provider is failing (it waited out an outage or a 429): that is the reason, as in waitOutOutage.
    const down = app.providers.guard.unavailable(app.providers.forSender(sender), now);
    if (down) await fail(app, m, sender, 'PROVIDER_UNAVAILABLE', unavailableText(seconds ?? 0, down));
    else
      await fail(
        app,
        m,
        sender,
        'EXPIRED',
        `Not handed to a carrier within the sender's ${m.planned_channel} validity period (${seconds} s).`,
      );
  }
  const gone = new Set(outlived.map((m) => m.id));
  return claimed.filter((m) => !gone.has(m.id));
}

/**
 * Quiet hours checked again as messages are handed to the carrier: a MARKETING message accepted outside its
 * recipient's quiet hours may have waited into them (behind its sender's throughput, backing off). Such a message
 * goes back to `held` until the period ends, with `message.held` as at acceptance (state and events commit
 * together); drain's wake job at the scope's next due time (nextDue) brings it back then. Answers the messages still
 * to send. The recipients' quiet groups come with the claim: a batch costs no statement here unless some are held
 * (one update and their events, in one transaction).
 */
async function holdInQuietHours(app: AppContext, claimed: Claimed[], senders: Map<string, SenderRow>): Promise<Claimed[]> {
  const checked = claimed.filter((m) => quietHoursApply({ messageType: m.message_type }));
  if (checked.length === 0) return claimed;
  // The recipients' quiet groups came with the claim (claimDue).
  const until = await quietHoldsOfContacts(
    checked.map((m) => ({ contactId: m.contact_id, tz: m.tz, prefix: m.prefix, start: m.qs, end: m.qe })),
    new Date(),
  );
  const holds = checked.flatMap((m) => {
    const at = until.get(m.contact_id);
    return at ? [{ organizationId: m.organization_id, id: m.id, until: at }] : [];
  });
  if (holds.length === 0) return claimed;
  await inTransaction(app.db, async (tx) => {
    const held = await q.holdMessages(tx, holds);
    await emitEvents(
      tx,
      queueOf(app),
      held.map((m) => messageEvent('message.held', m, senders.get(m.sender_id)!)),
    );
  });
  // One no longer `sending` (failed or revoked meanwhile) is not sent either.
  const heldIds = new Set(holds.map((h) => h.id));
  return claimed.filter((m) => !heldIds.has(m.id));
}

type Ready = { message: Claimed; channel: Channel; rendering: Rendering };

/** The asset an MMS's content carries (a media content's or a card's), when it names one. */
const assetIdOf = (content: unknown): string | undefined => {
  const c = content as { type?: string; assetId?: unknown };
  return (c.type === 'media' || c.type === 'card') && typeof c.assetId === 'string' ? c.assetId : undefined;
};

/**
 * MMS media within the carrier's limit (images.ts MMS_CARRIER_MAX_BYTES, 600 KB): an image or GIF asset whose sent
 * file is larger goes as its `mms_carrier` variant (transcoded to fit; the asset is unchanged) when the sender's
 * MMS protocol sets `mmsTranscoding`, and otherwise the message fails with MEDIA_TOO_LARGE, not sent, not charged.
 * A `mediaUrl` the client gave, and a video, are sent as given: their size is the client's to keep. Answers the
 * messages to send and those to fail (sendBatch fails them).
 */
async function fitMmsMedia(
  app: AppContext,
  ready: Ready[],
  settings: SendSettings,
): Promise<{ kept: Ready[]; tooLarge: Array<{ message: Claimed; text: string }> }> {
  const tooLarge: Array<{ message: Claimed; text: string }> = [];
  const refs = ready.flatMap((r) => {
    const assetId = r.channel === 'MMS' ? assetIdOf(r.message.content) : undefined;
    return assetId ? [{ organizationId: r.message.organization_id, assetId }] : [];
  });
  if (refs.length === 0) return { kept: ready, tooLarge };
  const rows = new Map((await q.mediaAssetsOfBatch(app.db, refs)).map((row) => [row.id, row]));
  const kept: Ready[] = [];
  for (const r of ready) {
    const row = r.channel === 'MMS' ? rows.get(assetIdOf(r.message.content) ?? '') : undefined;
    const source = row ? mmsSource(row) : null;
    if (!row || !source || source.sizeBytes <= MMS_CARRIER_MAX_BYTES) {
      kept.push(r);
    } else if (settings.mmsTranscoding) {
      const expiresAt = linkExpiry(r.message.created_at, MESSAGE_LINK_TTL_MS);
      const mediaUrl = variantLink(app.config.assetBaseUrl, row.organization_id, row.id, CARRIER_VARIANT, expiresAt);
      kept.push({ ...r, rendering: { ...r.rendering, mediaUrl } });
    } else {
      const text = `The image is ${Math.ceil(source.sizeBytes / 1024)} KB, over the carrier's MMS limit of ${MMS_CARRIER_MAX_BYTES / 1024} KB, and the sender's MMS protocol has mmsTranscoding off.`;
      tooLarge.push({ message: r.message, text });
    }
  }
  return { kept, tooLarge };
}

/** What dispatch knows of a sender's rule (sending-rule.ts): its protocol settings and the channels it may carry. */
type SenderRule = { settings: SendSettings; usable: (channel: Channel) => boolean };

/**
 * Hands a sender's admitted messages to the provider in one batch call; answers what to record, and how many
 * messages moved to their fallback sender instead (resolveChannels).
 */
async function sendBatch(
  app: AppContext,
  messages: Claimed[],
  sender: SenderRow,
  rule: SenderRule,
): Promise<{ accepted: Accepted[]; moved: number }> {
  const { settings } = rule;
  const provider = app.providers.forSender(sender);
  // The provider is rate limited (a 429's Retry-After) or its circuit is open (an outage): the messages wait,
  // without counting an attempt, instead of being handed over (src/providers/guard.ts).
  const blockedUntil = app.providers.guard.blockedUntil(provider);
  if (blockedUntil) {
    const afterSeconds = Math.max(1, Math.ceil((blockedUntil.getTime() - Date.now()) / 1000));
    const reason = `its circuit is open until ${blockedUntil.toISOString()} after repeated outages`;
    await waitOutOutage(app, messages, sender, settings, afterSeconds, reason);
    return { accepted: [], moved: 0 };
  }
  const { channels, moved, fallbacks } = await resolveChannels(app, provider, messages, sender, rule);
  // The fallbacks planned now are written before the provider is called, not with the acceptance's record: a
  // carrier's receipt may come back before that record (the simulator's and Twilio's status callbacks can), and the
  // message it finds must already say that it goes by its fallback and why, or its `message.delivered` would
  // announce `fallbackUsed: false`. One statement, only for a batch with such fallbacks.
  await q.planFallbacks(app.db, fallbacks);
  const rendered = messages.flatMap((message, i) => {
    const channel = channels[i];
    return channel ? [{ message, channel, rendering: render(channel, message.content as unknown as SendContent, settings) }] : [];
  });
  const { kept: ready, tooLarge } = await fitMmsMedia(app, rendered, settings);
  if (tooLarge.length) {
    for (const { message, text } of tooLarge) await fail(app, message, sender, 'MEDIA_TOO_LARGE', text);
  }
  if (ready.length === 0) return { accepted: [], moved };
  const from = { id: sender.id, type: sender.type, name: sender.name, phoneNumber: sender.phone_number, address: sender.address };
  const outcomes = await provider.sendBatch(
    ready.map(({ message, channel, rendering }) => ({
      dedupeKey: dedupeKeyOf(message),
      organizationId: message.organization_id,
      sender: from,
      from: sender.phone_number ?? sender.name,
      to: message.contact_phone,
      channel,
      body: rendering.body,
      title: rendering.title,
      mediaUrl: rendering.mediaUrl,
      attempt: message.attempts,
      acceptedAt: message.created_at,
      // A provider may fall back itself (a Twilio Messaging Service) only on this sender: a fallback another sender
      // carries (an RCS agent's number) comes back as a failed RCS receipt and moves to that sender (resolveChannels).
      fallbackAllowed: message.fallback_allowed && message.fallback_sender_id === null,
    })),
  );
  // Fault injection for the crash test (test/scale-out.test.ts): die between "sent" and "recorded".
  if (process.env.MSA_FAULT === 'crash-after-provider-send') process.exit(137);
  recordProviderOutcomes(app, provider, outcomes);
  const accepted: Accepted[] = [];
  await Promise.all(
    ready.map(async ({ message, channel, rendering }, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) {
        accepted.push({
          provider: provider.name,
          message,
          channel,
          providerMessageId: outcome.providerMessageId,
          segments: rendering.segments,
          encoding: rendering.encoding,
          costUnits: rendering.costUnits,
        });
      } else {
        await settleFailure(app, message, sender, settings, outcome.error);
      }
    }),
  );
  return { accepted, moved };
}

/**
 * What a batch's outcomes say about the provider (once per batch each): a rate limit; refused credentials; then a
 * success when any call succeeded, else an outage when one failed so. A batch with a success is never an outage
 * (the rule, and why, in src/providers/guard.ts).
 */
function recordProviderOutcomes(app: AppContext, provider: MessagingProvider, outcomes: SendOutcome[]): void {
  const errors = outcomes.flatMap((o) => (o.ok ? [] : [o.error]));
  const limited = errors.find((e): e is ProviderRateLimited => e instanceof ProviderRateLimited);
  if (limited) app.providers.guard.record(provider, { retryAfterSeconds: limited.retryAfterSeconds }, undefined, limited.message);
  const refused = errors.find((e) => e instanceof ProviderAuthFailed);
  if (refused) app.providers.guard.record(provider, 'auth_failed', undefined, refused.message);
  const outage = errors.find((e) => e instanceof ProviderError && e.outage);
  if (outcomes.some((o) => o.ok)) app.providers.guard.record(provider, 'ok');
  else if (outage) app.providers.guard.record(provider, 'outage', undefined, outage.message);
}

/**
 * A provider error: a rate limit waits its Retry-After and an outage waits with backoff, neither counting an attempt
 * (outageWaitEnds bounds the wait); another transient error is retried with backoff while attempts remain; a
 * refusal, refused credentials (PROVIDER_AUTH_FAILED) or the last attempt fails the message.
 */
async function settleFailure(
  app: AppContext,
  message: Claimed,
  sender: SenderRow,
  settings: SendSettings,
  error: ProviderError | ProviderRejection,
): Promise<void> {
  if (error instanceof ProviderRateLimited) {
    await waitOutOutage(app, [message], sender, settings, error.retryAfterSeconds, error.message);
  } else if (error instanceof ProviderError && error.outage) {
    await waitOutOutage(app, [message], sender, settings, backoffSeconds(message.attempts), error.message);
  } else if (error instanceof ProviderAuthFailed) {
    // Our credentials, not the message: waiting or retrying cannot help, so it fails at once with the reason.
    await fail(app, message, sender, error.code, error.message);
  } else if (error instanceof ProviderError && error.retryable && message.attempts < MAX_ATTEMPTS) {
    await requeue(app, [message], backoffSeconds(message.attempts), true);
  } else if (error instanceof ProviderRejection) {
    await fail(app, message, sender, error.code, error.message);
  } else {
    await fail(
      app,
      message,
      sender,
      'PROVIDER_UNAVAILABLE',
      `The provider kept failing after ${message.attempts} attempts: ${error.message}`,
    );
  }
}

/**
 * When a message stops waiting for its provider to come back: its acceptance plus the validity period of its planned
 * channel, or OUTAGE_WAIT_SECONDS when the sender sets none.
 */
function outageWaitEnds(message: Claimed, settings: SendSettings): Date {
  const validity = message.planned_channel ? settings.validitySeconds(message.planned_channel as Channel) : null;
  const seconds = validity ?? OUTAGE_WAIT_SECONDS;
  return new Date(message.created_at.getTime() + seconds * 1000);
}

/**
 * The provider cannot take messages now (an outage, a rate limit, an open circuit): each is put back, due in
 * `afterSeconds`, its claim not counted as an attempt, so a long outage never uses the attempt budget up. One whose
 * wait would outlive its validity period fails now with PROVIDER_UNAVAILABLE and the provider's reason.
 */
async function waitOutOutage(
  app: AppContext,
  messages: Claimed[],
  sender: SenderRow,
  settings: SendSettings,
  afterSeconds: number,
  reason: string,
): Promise<void> {
  const retryAt = Date.now() + afterSeconds * 1000;
  const [late, waiting] = [[] as Claimed[], [] as Claimed[]];
  for (const m of messages) (outageWaitEnds(m, settings).getTime() < retryAt ? late : waiting).push(m);
  await requeue(app, waiting, afterSeconds, false);
  for (const m of late) {
    const seconds = Math.round((outageWaitEnds(m, settings).getTime() - m.created_at.getTime()) / 1000);
    await fail(app, m, sender, 'PROVIDER_UNAVAILABLE', unavailableText(seconds, reason));
  }
}

const unavailableText = (validitySeconds: number, reason: string) =>
  `The provider could not take the message within its validity period (${validitySeconds} s): ${reason}.`;

/**
 * Records a batch of provider acceptances in one statement and announces them in one go; the RCS messages among them
 * that may fall back get their delivery deadline (rcs-expiry.ts) in the same transaction.
 */
async function recordAccepted(
  app: AppContext,
  accepted: Accepted[],
  senders: Map<string, SenderRow>,
  settings: Map<string, SendSettings>,
): Promise<void> {
  if (accepted.length === 0) return;
  // The state and its events commit together: a crash between them must not lose `message.sent`.
  await inTransaction(app.db, async (tx) => {
    const sent: MessageRow[] = [];
    for (const [provider, ofProvider] of Map.groupBy(accepted, (a) => a.provider)) {
      sent.push(
        ...(await q.recordAccepted(
          tx,
          provider,
          ofProvider.map((a) => ({
            organizationId: a.message.organization_id,
            id: a.message.id,
            providerMessageId: a.providerMessageId,
            channel: a.channel,
            segments: a.segments,
            encoding: a.encoding,
            costUnits: a.costUnits,
          })),
        )),
      );
    }
    const events = sent.filter((m) => m.status === 'sent').map((m) => messageEvent('message.sent', m, senders.get(m.sender_id)!));
    await emitEvents(tx, queueOf(app), events);
    await scheduleRcsExpiry(app, tx, queueOf(app), sent, senders, settings);
  });
}

/**
 * The channel to send each message on now. RCS with unknown capability asks the provider (and remembers the answer
 * on the contact); a handset without RCS gets the SMS/MMS fallback when allowed, otherwise the message fails. A
 * provider that carries RCS without a capability lookup (a Twilio Messaging Service) is handed the RCS message and
 * falls back itself; one that carries no RCS sends the fallback. The answers of a batch are written in one statement
 * (a blast batch holds thousands); the fallbacks are answered, for sendBatch to write before it calls the provider.
 * A fallback that another sender carries (an RCS
 * agent's, recorded at acceptance: `fallback_sender_id`) is not sent here: the message moves to that sender
 * (moveToFallbackSenders) — found now, or planned by a receipt whose RCS delivery failed.
 */
async function resolveChannels(
  app: AppContext,
  provider: MessagingProvider,
  messages: Claimed[],
  sender: SenderRow,
  rule: SenderRule,
): Promise<{ channels: Array<Channel | undefined>; moved: number; fallbacks: q.FallbackPlan[] }> {
  const checkedAt = new Date();
  const lookup = provider.checkRcsCapability?.bind(provider);
  const batched = await batchCapabilities(provider, messages);
  const answers = await Promise.all(
    messages.map(async (message): Promise<{ capable: boolean; reason: 'RCS_NOT_SUPPORTED' | 'RCS_CAPABILITY_UNKNOWN'; asked: boolean }> => {
      if (message.planned_channel === 'RCS' && !provider.channels.has('RCS'))
        return { capable: false, reason: 'RCS_NOT_SUPPORTED', asked: false };
      if (message.planned_channel !== 'RCS' || message.contact_rcs_capable !== null) {
        return { capable: message.contact_rcs_capable ?? false, reason: 'RCS_NOT_SUPPORTED', asked: false };
      }
      if (batched) {
        const capable = batched.get(message.contact_phone);
        return capable === undefined
          ? { capable: false, reason: 'RCS_CAPABILITY_UNKNOWN', asked: false }
          : { capable, reason: 'RCS_NOT_SUPPORTED', asked: true };
      }
      if (!lookup) return { capable: true, reason: 'RCS_NOT_SUPPORTED', asked: false };
      try {
        return {
          capable: (await lookup(message.contact_phone)).rcsCapable,
          reason: 'RCS_NOT_SUPPORTED',
          asked: true,
        };
      } catch (error) {
        if (!(error instanceof ProviderError)) throw error;
        return { capable: false, reason: 'RCS_CAPABILITY_UNKNOWN', asked: false };
      }
    }),
  );
  await contacts.setRcsCapableMany(
    app.db,
    messages.flatMap((m, i) =>
      answers[i]!.asked ? [{ organizationId: m.organization_id, id: m.contact_id, capable: answers[i]!.capable }] : [],
    ),
    checkedAt,
  );
  const fallbacks: q.FallbackPlan[] = [];
  const moving: FallbackToMove[] = [];
  const channels = await Promise.all(
    messages.map(async (message, i): Promise<Channel | undefined> => {
      const planned = message.planned_channel as Channel;
      // Its fallback planned since it was sent on RCS (a failed RCS delivery's receipt), carried by another sender.
      if (planned !== 'RCS' && message.fallback_sender_id !== null) {
        moving.push({ message, channel: planned, reason: message.fallback_reason ?? 'RCS_DELIVERY_FAILED' });
        return undefined;
      }
      const { capable, reason } = answers[i]!;
      if (planned !== 'RCS' || capable) return planned;
      if (!message.fallback_allowed) {
        await fail(app, message, sender, 'NO_CHANNEL_AVAILABLE', 'The handset cannot receive RCS and fallback to SMS is off.');
        return undefined;
      }
      const fallback = fallbackChannelFor(message.content as unknown as SendContent);
      if (message.fallback_sender_id !== null) {
        moving.push({ message, channel: fallback, reason });
        return undefined;
      }
      fallbacks.push({ organizationId: message.organization_id, id: message.id, channel: fallback, reason });
      message.fallback_reason = reason;
      return fallback;
    }),
  );
  const moved = await moveToFallbackSenders(app, moving, sender, rule);
  return { channels, moved, fallbacks };
}

/** A claimed message whose fallback its recorded fallback sender carries: the channel and the reason. */
type FallbackToMove = { message: Claimed; channel: Channel; reason: string };

const NO_REVIEWS: ReadonlySet<string> = new Set();

/**
 * Moves messages to the fallback sender recorded at acceptance (messages.fallback_sender_id), once their fallback is
 * known. That sender is asked the same rule as at acceptance (sending-rule.ts fallbackCarrier, with its facts read as
 * loadSendFacts reads them, once per fallback sender of the batch): one that may send now gets the message — its
 * sender, its conversation with the contact, its fallback channel and reason — queued again to go through that
 * sender's rate, validity and quiet hours (q.moveToFallbackSender); one that may not fails it with
 * SENDER_NOT_READY and the missing action, as acceptance refuses; one that cannot carry the channel (or is gone)
 * with NO_CHANNEL_AVAILABLE. Answers how many moved.
 */
async function moveToFallbackSenders(app: AppContext, moving: FallbackToMove[], sender: SenderRow, rule: SenderRule): Promise<number> {
  if (moving.length === 0) return 0;
  // The message's own sender as fallbackCarrier weighs it: it carries the fallback itself if it may use the channel.
  // Its readiness is not asked again (it was, at acceptance).
  const own = { senderId: sender.id, decision: { ...rule, notReady: null } satisfies SendingDecision };
  const reviewedHere = (s: FallbackSenderFacts['sender']) => app.providers.forSender(s).registry?.kinds ?? NO_REVIEWS;
  const moves: q.FallbackMove[] = [];
  for (const group of Map.groupBy(moving, (m) => `${m.message.organization_id}:${m.message.fallback_sender_id}`).values()) {
    const { organization_id: orgId, fallback_sender_id: fallbackId } = group[0]!.message;
    const contactIds = [...new Set(group.map((m) => m.message.contact_id))];
    const { db } = await tenantFor(app, orgId);
    const { facts, testDevices } = await fallbackSenderFacts(db, orgId, fallbackId!, contactIds);
    for (const { message, channel, reason } of group) {
      // The loader's JSON is the rule's facts, as at acceptance (send.ts channelPlanOf).
      const fallback = facts && ({ ...facts, recipientIsTestDevice: testDevices.has(message.contact_id) } as FallbackSenderFacts);
      const carrier = fallbackCarrier(own, fallback, reviewedHere, channel);
      const content = message.content as unknown as SendContent;
      if (carrier.senderId !== null) {
        const preview = previewOfRendering(render(channel, content, carrier.settings), content);
        moves.push({ organizationId: orgId, id: message.id, senderId: carrier.senderId, channel, reason, preview });
      } else if (carrier.refusal) {
        await fail(app, message, sender, 'SENDER_NOT_READY', notReadyText(carrier.refusal));
      } else {
        const why = carrier.unusable ?? `its fallback sender ${fallbackId} no longer exists`;
        await fail(app, message, sender, 'NO_CHANNEL_AVAILABLE', `${fallbackCause(reason)}, and ${why}.`);
      }
    }
  }
  const leftOf = new Map(moving.map(({ message }) => [message.id, message.conversation_id]));
  // One transaction: a crash between the move and its follow-up would leave the bot session on the conversation
  // the contact's reply no longer reaches.
  return inTransaction(app.db, async (tx) => {
    const moved = await q.moveToFallbackSender(tx, moves);
    await followFallbackMoves(tx, moved, leftOf);
    return moved.length;
  });
}

/**
 * The handsets of a claimed batch whose RCS capability is unknown, looked up in one call (RBM's users:batchGet) when
 * the provider has one and more than one handset is asked: a blast batch costs one request instead of one each. A
 * single handset keeps the per-phone lookup. Null when not batched (each message asks on its own); a phone the
 * answer leaves out, or every phone when the call fails, is unknown (RCS_CAPABILITY_UNKNOWN).
 */
async function batchCapabilities(provider: MessagingProvider, messages: Claimed[]): Promise<Map<string, boolean> | null> {
  if (!provider.checkRcsCapabilities || !provider.channels.has('RCS')) return null;
  const phones = [
    ...new Set(messages.filter((m) => m.planned_channel === 'RCS' && m.contact_rcs_capable === null).map((m) => m.contact_phone)),
  ];
  if (phones.length < 2) return null;
  try {
    return await provider.checkRcsCapabilities(phones);
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    return new Map();
  }
}

function backoffSeconds(attempt: number): number {
  const base = dispatchTuning.backoffBaseSeconds * 2 ** Math.max(0, attempt - 1);
  return base / 2 + Math.random() * base; // jitter around the exponential step
}

/** Back to queued, due again in `afterSeconds` (the scope's wake job then comes for it). */
async function requeue(app: AppContext, messages: MessageRow[], afterSeconds: number, countsAsAttempt: boolean): Promise<void> {
  await q.requeueMessages(
    app.db,
    messages.map((m) => ({ organizationId: m.organization_id, id: m.id })),
    countsAsAttempt,
    afterSeconds,
  );
}

/** Fails the message with its reason; one no carrier ever accepted drops its planned fallback (fallback.ts). */
async function fail(app: AppContext, message: MessageRow, sender: SenderRow, code: string, text: string): Promise<void> {
  await inTransaction(app.db, async (tx) => {
    const failed = await q.failMessage(tx, message.organization_id, message.id, code, text, { dropFallback: dropsFallbackOnEnd(message) });
    if (failed) await emitEvent(tx, queueOf(app), messageEvent('message.failed', failed, sender));
  });
}
