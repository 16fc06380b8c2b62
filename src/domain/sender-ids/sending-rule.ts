// The rule the send path asks for every message about its sender (decideSending): which channels it may carry now
// (type, protocols, lifecycle), whether the readiness its type requires is met (else SENDER_NOT_READY with the
// missing action), what its protocol settings do to a message (smart encoding, validity period), and at what rate
// it sends (throughputOf). Pure but for refreshThroughput: callers read the facts with their other reads (the send
// path in its one statement, the dispatcher with its batch of senders) and ask here; nothing else interprets them.
import { registrationFacts, setThroughput } from '../../db/queries/sender-ids/throughput.ts';
import type { StoredProtocolConfig } from '../../db/tables/sender-ids.ts';
import { evaluateProgram, type Action, type ProgramState } from '../programs/readiness.ts';
import type { TenantDb } from '../../db/tenant.ts';

type Channel = 'SMS' | 'MMS' | 'RCS' | 'CHATAPP';

/** A protocol row as the callers read it (sender_protocols). */
export type ProtocolFact = { type: string; status: string; config?: StoredProtocolConfig | null };

/** A protocol's `validityPeriodSeconds` when enabling it does not say, also its maximum (sender-id-protocols.yaml): 4 hours. */
export const DEFAULT_VALIDITY_PERIOD_SECONDS = 14_400;

/** Also what render() takes (its RenderSettings is the part of these a rendering needs). */
export type SendSettings = {
  /** The SMS protocol's smartEncoding (typographic look-alikes → GSM-7 before segmenting). */
  smartEncoding: boolean;
  /** MMS: an asset image over the carrier limit (600 KB) goes transcoded instead of failing (dispatch.ts fitMmsMedia). */
  mmsTranscoding: boolean;
  /** How long a message on this channel may wait undelivered before it fails `EXPIRED`; null: no limit. */
  validitySeconds: (channel: Channel) => number | null;
  /** The RCS protocol's `fallbackToSms`: whether a send that does not say falls back to SMS/MMS (true without it). */
  fallbackToSms: boolean;
};

/**
 * A sender's settings from its ACTIVE protocol rows. A sender without protocol rows (the sandbox sender, senders
 * from before protocols) has none of them: its messages go as written and wait as long as dispatch needs, except
 * that an oversize MMS image is transcoded (mmsTranscoding's default) rather than failed.
 */
export function sendSettingsOf(rows: readonly ProtocolFact[]): SendSettings {
  const active = new Map(rows.filter((r) => r.status === 'ACTIVE').map((r) => [r.type, r.config ?? {}]));
  return {
    smartEncoding: active.get('SMS')?.smartEncoding === true,
    // Without an MMS protocol the setting's default (on, as enabling the protocol sets it): an oversize image is
    // transcoded rather than failed on a sender that never configured MMS (the sandbox sender).
    mmsTranscoding: active.get('MMS')?.mmsTranscoding !== false,
    validitySeconds: (channel) => active.get(channel)?.validityPeriodSeconds ?? null,
    fallbackToSms: active.get('RCS')?.fallbackToSms !== false,
  };
}

/** Whether a message created at `createdAt` has outlived its channel's validity period at `now`. */
export function expired(settings: SendSettings, channel: Channel, createdAt: Date, now: Date): boolean {
  const seconds = settings.validitySeconds(channel);
  return seconds !== null && now.getTime() - createdAt.getTime() > seconds * 1000;
}

/** What a sender's rate depends on (throughputOf). */
export type ThroughputFacts = {
  type: string;
  status: string;
  countryCode: string | null;
  isSandbox: boolean;
  /** Its campaign (10DLC) is REGISTERED. */
  campaignRegistered: boolean;
  /** Its brand's vetting score (0–100), null when not vetted. */
  vettingScore: number | null;
};

/** The carrier sandbox takes far more than any carrier grants one sender. */
export const SANDBOX_THROUGHPUT = 10_000;

/**
 * Messages per second a sender may hand to its carrier, as the carriers' published classes have it (the document's
 * `SenderId.throughputPerSecond`): 10DLC by campaign registration and brand vetting tier, toll-free verified or not,
 * short code about 100, alphanumeric, RCS and chat-app by their platforms' defaults. Dispatch's per-sender limiter
 * reads the stored value (refreshThroughput keeps it).
 */
export function throughputOf(f: ThroughputFacts): number {
  if (f.isSandbox) return SANDBOX_THROUGHPUT;
  switch (f.type) {
    case 'LONG_CODE':
      // A number without a country yet is a US 10DLC number (the type's default market).
      if ((f.countryCode !== null && f.countryCode !== 'US') || !f.campaignRegistered) return 1;
      if (f.vettingScore !== null && f.vettingScore >= 75) return 75;
      if (f.vettingScore !== null && f.vettingScore >= 50) return 40;
      return 4;
    case 'TOLL_FREE':
      return f.status === 'ACTIVE' ? 25 : 3;
    case 'SHORT_CODE':
      return 100;
    case 'ALPHANUMERIC':
      return 10;
    case 'RCS_AGENT':
      return 50;
    case 'CHATAPP_BUSINESS':
      return 80;
    default:
      return 1;
  }
}

/**
 * Recomputes and stores a sender's throughput from its type, status, country, campaign and vetting; called where
 * those change (a registry outcome applied to the sender, a program attachment or detachment).
 */
export async function refreshThroughput(
  db: TenantDb,
  organizationId: string,
  sender: { id: string; type: string; status: string; country_code: string | null; is_sandbox: boolean },
): Promise<number> {
  const facts = await registrationFacts(db, organizationId, sender.id);
  const perSecond = throughputOf({
    type: sender.type,
    status: sender.status,
    countryCode: sender.country_code,
    isSandbox: sender.is_sandbox,
    ...facts,
  });
  await setThroughput(db, organizationId, sender.id, perSecond);
  return perSecond;
}

/** Channels each sender type carries (the document's `SenderIdType`): a number carries SMS/MMS, an agent RCS. */
export const TYPE_CHANNELS: Readonly<Record<string, readonly Channel[]>> = {
  LONG_CODE: ['SMS', 'MMS'],
  TOLL_FREE: ['SMS', 'MMS'],
  SHORT_CODE: ['SMS', 'MMS'],
  ALPHANUMERIC: ['SMS'],
  RCS_AGENT: ['RCS'],
  CHATAPP_BUSINESS: ['CHATAPP'],
};

/** The program a sender sends under, as the send path reads it (loadSendFacts): its state and the sender's role. */
export type SenderProgram = {
  /** The sender's role in it; null when it is the sender's registration program but the sender is not attached. */
  role: string | null;
  state: ProgramState;
};

export type SendingFacts = {
  sender: { id: string; type: string; is_sandbox: boolean; rcs_agent_phase: string | null };
  protocols: readonly ProtocolFact[];
  program: SenderProgram | null;
  /** Whether the recipient is one of the sender's test devices; null for a set of recipients (a blast batch). */
  recipientIsTestDevice: boolean | null;
  /**
   * The registrations the sender's provider reviews through this service (its registry's kinds). Where the provider
   * has no registry of a kind (Twilio takes 10DLC campaigns in its own console, Google launches RBM
   * agents in its own), that readiness is the provider's to enforce: the carrier refuses an unregistered sender's
   * message (Twilio 30034) and the message fails with its reason, so the rule does not refuse it first.
   */
  reviewedHere: ReadonlySet<string>;
};

export type NotReady = { action: Action; message: string };
export type SendingDecision = { usable: (channel: Channel) => boolean; settings: SendSettings; notReady: NotReady | null };

const customerAction = (code: Action['code'], message: string, senderId: string | null): Action => ({
  code,
  owner: 'CUSTOMER',
  message,
  blocking: true,
  senderId,
});

/**
 * The rule, per send: which channels the sender may carry now, and whether it may send at all.
 * - Channels: its type's (TYPE_CHANNELS); the sandbox sender adds the sandbox's simulated RCS. A sender with
 *   protocol rows carries a channel only while that protocol is ACTIVE (the sandbox's RCS aside); one without any
 *   (from before protocols) carries its type's channels.
 * - Readiness its type requires: a 10DLC number (LONG_CODE, not the sandbox) sends only as an attached PRIMARY or
 *   FALLBACK sender of a ready program (brand and campaign REGISTERED); an RCS agent only LAUNCHED, or in TESTING
 *   towards its test devices; a TEST-role sender only towards its test devices. The refusal names the missing
 *   action: the program's `nextAction`, or the sender's own. The first two apply where this service reviews the
 *   registration (`reviewedHere`); a provider that registers senders in its own console enforces them itself.
 */
export function decideSending(f: SendingFacts): SendingDecision {
  return { usable: channelsOf(f.sender, f.protocols), settings: sendSettingsOf(f.protocols), notReady: notReadyOf(f) };
}

/**
 * The channel part of the rule: which channels the sender may carry now (decideSending's `usable`), for whoever
 * asks about channels without a send (the deprecated /v1/channels view, a channel's health).
 */
export function channelsOf(
  sender: { type: string; is_sandbox: boolean },
  protocols: readonly ProtocolFact[],
): (channel: Channel) => boolean {
  const typeChannels = new Set<Channel>(TYPE_CHANNELS[sender.type] ?? []);
  const rows = new Map(protocols.map((p) => [p.type, p.status]));
  return (channel) => {
    if (sender.is_sandbox && channel === 'RCS') return true;
    if (!typeChannels.has(channel)) return false;
    return rows.size === 0 || rows.get(channel) === 'ACTIVE';
  };
}

function notReadyOf(f: SendingFacts): NotReady | null {
  const { sender, program } = f;
  const testOnly = (who: string, action: Action): NotReady | null =>
    f.recipientIsTestDevice === true
      ? null
      : { action, message: `${who} reaches its test devices only${f.recipientIsTestDevice === null ? ', not a blast audience' : ''}.` };
  if (program?.role === 'TEST')
    return testOnly(
      'A TEST-role sender',
      customerAction('ATTACH_PRIMARY_SENDER', 'Attach a PRIMARY sender to carry production traffic.', null),
    );
  if (sender.type === 'RCS_AGENT' && !sender.is_sandbox && f.reviewedHere.has('RCS_AGENT_LAUNCH')) {
    const phase = sender.rcs_agent_phase ?? 'TESTING';
    if (phase === 'TESTING')
      return testOnly('An RCS agent in TESTING', customerAction('LAUNCH_RCS_AGENT', 'Launch the RCS agent, then submit it.', sender.id));
    if (phase !== 'LAUNCHED')
      return {
        action: customerAction('LAUNCH_RCS_AGENT', `The RCS agent is ${phase}; it sends once LAUNCHED.`, sender.id),
        message: `The RCS agent is ${phase}, not LAUNCHED.`,
      };
  }
  if (sender.type === 'LONG_CODE' && !sender.is_sandbox && f.reviewedHere.has('CAMPAIGN')) {
    if (!program)
      return {
        action: customerAction('REGISTER_BRAND', 'Register the brand with POST /v1/sender-ids/{id}/brand/register.', sender.id),
        message: 'A 10DLC number sends only under a registered brand and campaign.',
      };
    const evaluation = evaluateProgram(program.state);
    if (program.role === null) {
      const action =
        evaluation.nextAction ?? customerAction('ATTACH_PRIMARY_SENDER', 'Attach the sender to its program with role PRIMARY.', sender.id);
      return { action, message: 'The sender is not attached to its program.' };
    }
    if (!evaluation.readiness.ready && evaluation.nextAction)
      return { action: evaluation.nextAction, message: `Its program is not ready: ${evaluation.nextAction.message}` };
  }
  return null;
}

/** The fallback sender as the send path reads it (loadSendFacts): its row, and the facts decideSending asks of it. */
export type FallbackSenderFacts = Omit<SendingFacts, 'sender' | 'reviewedHere'> & {
  sender: SendingFacts['sender'] & { status: string; send_ready: boolean; status_reason: string | null; provider: string | null };
};

/** Who carries a message's SMS/MMS fallback: the sender itself, another sender, or nobody (`refusal` says why, when one was named). */
export type FallbackCarrier =
  { senderId: string; settings: SendSettings } | { senderId: null; refusal: NotReady | null; unusable: string | null };

/**
 * Where a message's SMS/MMS fallback goes (the document's `SenderProtocolConfig.fallbackSenderIdId` and
 * `ProgramSenderRole`): a sender that carries the fallback channel itself sends it (the sandbox sender; a number
 * asked for RCS); otherwise the sender's fallback sender — the RCS protocol's `fallbackSenderIdId`, else its
 * program's FALLBACK sender (the loader picks which) — which must itself pass this rule: ACTIVE and send-ready,
 * the readiness its type requires (`notReady`, naming it), and the channel open on it. Nobody carries it when
 * neither applies (`refusal` null, `unusable` null), or when the fallback sender may not (its refusal, or why its
 * channel is closed: the send then refuses naming it).
 */
export function fallbackCarrier(
  own: { senderId: string; decision: SendingDecision },
  fallback: FallbackSenderFacts | null,
  reviewedHere: (sender: FallbackSenderFacts['sender']) => ReadonlySet<string>,
  channel: Channel,
): FallbackCarrier {
  if (own.decision.usable(channel)) return { senderId: own.senderId, settings: own.decision.settings };
  if (!fallback) return { senderId: null, refusal: null, unusable: null };
  const { sender } = fallback;
  if (sender.status !== 'ACTIVE' || !sender.send_ready)
    return {
      senderId: null,
      unusable: null,
      refusal: {
        action: customerAction('ACTIVATE_SENDER', `Activate the fallback sender ${sender.id}, or name another.`, sender.id),
        message: `The fallback sender ${sender.id} is ${sender.status === 'ACTIVE' ? 'ACTIVE but not send-ready' : sender.status}${sender.status_reason ? ` (${sender.status_reason})` : ''}.`,
      },
    };
  const decision = decideSending({ ...fallback, reviewedHere: reviewedHere(sender) });
  if (decision.notReady)
    return {
      senderId: null,
      unusable: null,
      refusal: { action: decision.notReady.action, message: `The fallback sender ${sender.id} may not send: ${decision.notReady.message}` },
    };
  if (!decision.usable(channel))
    return { senderId: null, refusal: null, unusable: `the fallback sender ${sender.id} (${sender.type}) cannot carry ${channel} now` };
  return { senderId: sender.id, settings: decision.settings };
}
