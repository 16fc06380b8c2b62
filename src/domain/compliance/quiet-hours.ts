// Quiet hours: the local-time period in which MARKETING messages are held. The period runs from `start` to
// `end` (HH:MM local wall-clock time), over midnight when end < start (the TCPA default 21:00 → 08:00). A
// recipient who may be in several time zones is quiet when quiet in any of them, and a held message goes out
// at the first instant that is outside the period in every one of them. Wall-clock arithmetic goes through
// Intl, so daylight-saving changes are honoured.

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

type LocalTime = { year: number; month: number; day: number; hour: number; minute: number; second: number };

// `format` is about twice as fast as `formatToParts`; en-US numeric output is fixed: `6/10/2026, 14:05:09`.
const EN_US = /^(\d+)\/(\d+)\/(\d+), (\d+):(\d+):(\d+)$/;

function localTime(zone: string, at: Date): LocalTime {
  const m = EN_US.exec(formatter(zone).format(at));
  if (!m) throw new Error(`unexpected date format for ${zone}`);
  return { month: Number(m[1]), day: Number(m[2]), year: Number(m[3]), hour: Number(m[4]), minute: Number(m[5]), second: Number(m[6]) };
}

/** `HH:MM` → minutes after midnight. */
export function minutesOf(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
}

/** Whether local minute-of-day `m` falls in the quiet period [start, end). */
function inQuietPeriod(m: number, start: number, end: number): boolean {
  if (start === end) return false;
  return start < end ? m >= start && m < end : m >= start || m < end;
}

export function isQuietAt(zone: string, at: Date, start: string, end: string): boolean {
  const t = localTime(zone, at);
  return inQuietPeriod(t.hour * 60 + t.minute, minutesOf(start), minutesOf(end));
}

/** Offset of `zone` from UTC at instant `ms`, in ms (local wall clock minus UTC). */
function offsetAt(zone: string, ms: number): number {
  const t = localTime(zone, new Date(ms));
  const wall = Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);
  return wall - Math.floor(ms / 1000) * 1000;
}

/**
 * The instant at which the wall clock of `zone` shows the given local date and time. When the time occurs twice
 * (clocks turned back) the first occurrence; when it is skipped (clocks turned forward) the same wall time read
 * with the offset from before the jump (02:30 → 03:30).
 */
export function instantOfLocal(zone: string, year: number, month: number, day: number, minutes: number): Date {
  const wall = Date.UTC(year, month - 1, day, Math.floor(minutes / 60), minutes % 60);
  const before = wall - offsetAt(zone, wall - 86_400_000);
  const after = wall - offsetAt(zone, wall + 86_400_000);
  const valid = [before, after].filter((t) => t + offsetAt(zone, t) === wall).sort((a, b) => a - b);
  return new Date(valid[0] ?? before);
}

/** Instants after `now`, within about two days, at which the quiet period ends in `zone`. */
function quietEnds(zone: string, now: Date, end: number): Date[] {
  const today = localTime(zone, now);
  const out: Date[] = [];
  for (let d = 0; d <= 2; d++) {
    const date = new Date(Date.UTC(today.year, today.month - 1, today.day + d));
    const at = instantOfLocal(zone, date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), end);
    if (at.getTime() > now.getTime()) out.push(at);
  }
  return out;
}

/**
 * Null when `now` is outside the quiet period in every zone; otherwise the first instant at which it is outside
 * the period in all of them. If the zones are so far apart that no such instant exists within two days, the
 * latest end of the current quiet periods (the message is then evaluated again at that time).
 */
export function quietHoursHoldUntil(zones: string[], now: Date, start: string, end: string): Date | null {
  const quietZones = zones.filter((z) => isQuietAt(z, now, start, end));
  if (quietZones.length === 0) return null;
  const endMinutes = minutesOf(end);
  const candidates = [...new Set(zones.flatMap((z) => quietEnds(z, now, endMinutes)).map((d) => d.getTime()))].sort((a, b) => a - b);
  for (const ms of candidates) {
    const at = new Date(ms);
    if (zones.every((z) => !isQuietAt(z, at, start, end))) return at;
  }
  const currentEnds = quietZones.map((z) => quietEnds(z, now, endMinutes)[0]!).map((d) => d.getTime());
  return new Date(Math.max(...currentEnds));
}
