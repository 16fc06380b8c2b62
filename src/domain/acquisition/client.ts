// Who is calling the public enrollment endpoint, from the request headers (handlers see no socket).
//
// The client IP is the last `X-Forwarded-For` hop: the address the nearest proxy (load balancer) saw, which a
// client cannot forge behind one proxy. Without the header every caller shares the bucket `unknown` (strict,
// never lax). Served directly on the Internet without a proxy, a client could still send its own header: the
// socket address is not reachable from a handler today (see the section's CHANGELOG note).
export function clientOf(headers: Record<string, string | string[] | undefined>): { ip: string | null; userAgent: string | null } {
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(',') : v);
  const hops = (first(headers['x-forwarded-for']) ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const ip = hops.length ? hops[hops.length - 1]!.slice(0, 64) : null;
  const userAgent = first(headers['user-agent'])?.slice(0, 1000) ?? null;
  return { ip, userAgent };
}
