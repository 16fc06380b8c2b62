// Signed links to asset variants (src/lib/signed-urls.ts): what the Asset resource shows as `url`, and what a
// carrier receives as message media. A link works without an API key until it expires. Expiries are counted
// from the start of the current hour, so every link to one variant made within an hour is the same URL: a
// blast to many recipients hands carriers one media URL, which their caches (and ours) fetch once.
import { signUrl } from '../../lib/signed-urls.ts';

const HOUR_MS = 60 * 60 * 1000;
/** Links in the Asset resource (`url`, `variants[].url`): 24 hours from the start of the hour they were read. */
export const RESOURCE_LINK_TTL_MS = 24 * HOUR_MS;
/**
 * Links handed to a carrier as message media: 7 days from the start of the hour the message was accepted, long
 * enough for a message held for quiet hours, retried with backoff, or fetched late by a store-and-forward MMSC.
 */
export const MESSAGE_LINK_TTL_MS = 7 * 24 * HOUR_MS;

export function linkExpiry(now: Date, ttlMs: number): Date {
  return new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS + ttlMs);
}

const variantPath = (assetId: string, variant: string): string => `/v1/assets/${assetId}/variant/${variant}`;

export function variantLink(baseUrl: string, organizationId: string, assetId: string, variant: string, expiresAt: Date): string {
  return signUrl(baseUrl, variantPath(assetId, variant), organizationId, expiresAt);
}

/** The variant an MMS carries when its image passes the carrier's limit (assets.ts carrierDownload; dispatch). */
export const CARRIER_VARIANT = 'mms_carrier';
