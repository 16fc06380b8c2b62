// The rule the send path asks for every message about its sender: what the sender's protocol settings do to a
// message (smart encoding, validity period, MMS transcoding, where an RCS message falls back). Pure: callers read
// the protocol rows with their other facts (the send path in its one statement, the dispatcher with its batch of
// senders) and ask here; nothing else interprets a protocol's config.
import type { Db } from '../../db/database.ts';
import { registrationFacts, setThroughput } from '../../db/queries/sender-ids/throughput.ts';
import type { StoredProtocolConfig } from '../../db/tables/sender-ids.ts';

type Channel = 'SMS' | 'MMS' | 'RCS' | 'CHATAPP';

/** A protocol row as the callers read it (sender_protocols). */
export type ProtocolFact = { type: string; status: string; config?: StoredProtocolConfig | null };

/** Also what render() takes (its RenderSettings is the part of these a rendering needs). */
export type SendSettings = {
  /** The SMS protocol's smartEncoding (typographic look-alikes → GSM-7 before segmenting). */
  smartEncoding: boolean;
  /** MMS: media over the carrier's size limit is resized instead of failing the message. */
  mmsTranscoding: boolean;
  /** How long a message on this channel may wait undelivered before it fails `EXPIRED`; null: no limit. */
  validitySeconds: (channel: Channel) => number | null;
};

/**
 * A sender's settings from its ACTIVE protocol rows. A sender without protocol rows (the sandbox sender, senders
 * from before protocols) has none of them: its messages go as written and wait as long as dispatch needs.
 */
export function sendSettingsOf(rows: readonly ProtocolFact[]): SendSettings {
  const active = new Map(rows.filter((r) => r.status === 'ACTIVE').map((r) => [r.type, r.config ?? {}]));
  return {
    smartEncoding: active.get('SMS')?.smartEncoding === true,
    mmsTranscoding: active.get('MMS')?.mmsTranscoding === true,
    validitySeconds: (channel) => active.get(channel)?.validityPeriodSeconds ?? null,
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
  db: Db,
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
