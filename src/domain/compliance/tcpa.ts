// A contact's effective TCPA settings: explicit time zone, else inferred from the number (Google's
// libphonenumber time-zone mapping: country, and area code for North America), else unknown; quiet hours
// default to the TCPA window (no marketing before 08:00 or after 21:00 local time).
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { timezones } from 'libphonenumber-geo-carrier';

export const DEFAULT_QUIET_HOURS_START = '21:00';
export const DEFAULT_QUIET_HOURS_END = '08:00';

export type TimeZoneSource = 'explicit' | 'inferred' | 'unknown';

export type TcpaSettings = {
  /** Effective zone (explicit or the first inferred one); null when unknown. */
  timeZone: string | null;
  timeZoneSource: TimeZoneSource;
  /** Every zone the recipient may be in: the quiet-hours check must hold in all of them. */
  candidateTimeZones: string[];
  quietHoursStart: string;
  quietHoursEnd: string;
  consentType: 'NONE' | 'TRANSACTIONAL' | 'MARKETING';
};

type ContactTcpaColumns = {
  phone: string;
  time_zone: string | null;
  quiet_hours_start: string | null;
  quiet_hours_end: string | null;
  consent_type: string;
};

/** IANA zones the number may be in ([] when the mapping knows none). */
export async function inferTimeZones(phone: string): Promise<string[]> {
  const parsed = parsePhoneNumberFromString(phone);
  if (!parsed) return [];
  const zones = (await timezones(parsed)) ?? [];
  return zones.filter((z) => z !== 'Etc/Unknown');
}

export async function resolveTcpa(contact: ContactTcpaColumns): Promise<TcpaSettings> {
  const quiet = {
    quietHoursStart: contact.quiet_hours_start ?? DEFAULT_QUIET_HOURS_START,
    quietHoursEnd: contact.quiet_hours_end ?? DEFAULT_QUIET_HOURS_END,
    consentType: contact.consent_type as TcpaSettings['consentType'],
  };
  if (contact.time_zone) {
    return { timeZone: contact.time_zone, timeZoneSource: 'explicit', candidateTimeZones: [contact.time_zone], ...quiet };
  }
  const zones = await inferTimeZones(contact.phone);
  if (zones.length === 0) return { timeZone: null, timeZoneSource: 'unknown', candidateTimeZones: [], ...quiet };
  return { timeZone: zones[0]!, timeZoneSource: 'inferred', candidateTimeZones: zones, ...quiet };
}

/** Whether `zone` is a time zone the runtime's IANA database knows. */
export function isKnownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
