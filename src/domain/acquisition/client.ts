// Who is calling a public form (the enrollment endpoint, a landing page): the address the HTTP layer derived
// (the socket's, or under TRUST_PROXY the X-Forwarded-For entry the trusted proxies vouch for; src/http/client.ts)
// and the user agent, kept as consent evidence.
export type PublicClient = { ip: string | null; userAgent: string | null };

/**
 * The key a client's rate limits count on: an IPv4 address as it is, an IPv6 address by its /64 prefix (one
 * subscriber line or host is routinely given a whole /64, so counting single IPv6 addresses would give one
 * caller 2^64 buckets). IPv4-mapped IPv6 (`::ffff:203.0.113.9`) is its IPv4 address. No address at all (the
 * socket closed before the request was read) shares one bucket: such a caller gets no answer anyway.
 */
export function clientKey(ip: string | null): string {
  if (!ip) return 'none';
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!ip.includes(':')) return ip;
  return `${expandIpv6(ip).slice(0, 4).join(':')}::/64`;
}

/** The eight hextets of an IPv6 address (zone id dropped), without leading zeros. */
function expandIpv6(ip: string): string[] {
  const bare = ip.split('%')[0]!.toLowerCase();
  const [head, tail] = bare.includes('::') ? bare.split('::') : [bare, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0');
  return [...left, ...fill, ...right].map((h) => h.replace(/^0+(?=.)/, ''));
}
