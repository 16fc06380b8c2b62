// A provider's Retry-After header (delta-seconds or an HTTP date) as whole seconds, bounded to [1, 3600]; 1 when
// absent or unreadable (a 429 without it still slows that provider's dispatch down).
export function retryAfterSeconds(value: unknown, now = Date.now()): number {
  const raw = Array.isArray(value) ? value[0] : value;
  if (typeof raw !== 'string' && typeof raw !== 'number') return 1;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.min(3600, Math.max(1, Math.ceil(seconds)));
  const at = Date.parse(String(raw));
  return Number.isFinite(at) ? Math.min(3600, Math.max(1, Math.ceil((at - now) / 1000))) : 1;
}
