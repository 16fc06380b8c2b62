// The rule the send path asks for every message about its sender: what the sender's protocol settings do to a
// message (smart encoding, validity period, MMS transcoding, where an RCS message falls back). Pure: callers read
// the protocol rows with their other facts (the send path in its one statement, the dispatcher with its batch of
// senders) and ask here; nothing else interprets a protocol's config.
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
