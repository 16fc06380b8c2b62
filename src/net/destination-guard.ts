// SSRF guard for every address this service connects to on someone else's word: webhook endpoints, the MCP
// server's URL, and media links a provider adapter downloads itself (RBM's files.create upload). It sits outside
// src/domain so that the providers, which never import the domain, use the same rules. A URL is checked when it is
// given (an endpoint created or changed), and every address is checked again at connect time (the `lookup` of the
// agents), so a host that re-resolves to an internal address (DNS rebinding) is refused then. Literal IPs never
// reach `lookup`, so the callers check them with checkUrlShape().
//
// Address ranges come from the IANA special-purpose registries, matched with Node's net.BlockList (ipaddr.js is
// only a transitive dependency here, so it is not relied on). IPv6 is allow-listed: only global unicast
// (2000::/3) minus its special blocks is public, which also refuses IPv4-mapped (::ffff:0:0/96), IPv4-compatible
// (::/96) and NAT64 (64:ff9b::/96) forms of any IPv4 address.
import { promises as dns, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** public: deliverable. internal: private, loopback, link-local, … (allowed with WEBHOOK_ALLOW_PRIVATE=1). forbidden: never a destination. */
export type AddressClass = 'public' | 'internal' | 'forbidden';

function blockList(ranges: Array<[string, number]>, family: 'ipv4' | 'ipv6'): BlockList {
  const list = new BlockList();
  for (const [net, prefix] of ranges) list.addSubnet(net, prefix, family);
  return list;
}

const FORBIDDEN_V4 = blockList(
  [
    ['0.0.0.0', 8],
    ['224.0.0.0', 4],
    ['240.0.0.0', 4],
  ],
  'ipv4',
); // this network, multicast, reserved + broadcast
const INTERNAL_V4 = blockList(
  [
    ['10.0.0.0', 8], // private
    ['100.64.0.0', 10], // carrier-grade NAT
    ['127.0.0.0', 8], // loopback
    ['169.254.0.0', 16], // link-local (cloud metadata at 169.254.169.254)
    ['172.16.0.0', 12], // private
    ['192.0.0.0', 24], // IETF protocol assignments
    ['192.0.2.0', 24], // documentation
    ['192.88.99.0', 24], // 6to4 relay anycast
    ['192.168.0.0', 16], // private
    ['198.18.0.0', 15], // benchmarking
    ['198.51.100.0', 24], // documentation
    ['203.0.113.0', 24], // documentation
  ],
  'ipv4',
);
const GLOBAL_UNICAST_V6 = blockList([['2000::', 3]], 'ipv6');
const SPECIAL_V6 = blockList(
  [
    ['2001::', 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID …)
    ['2001:db8::', 32], // documentation
    ['2002::', 16], // 6to4: embeds an arbitrary IPv4 address
    ['3fff::', 20], // documentation
  ],
  'ipv6',
);
const FORBIDDEN_V6 = blockList(
  [
    ['::', 128],
    ['ff00::', 8],
  ],
  'ipv6',
); // unspecified, multicast

/** The IPv4 address inside ::ffff:a.b.c.d (in any spelling), else null. */
function mappedIpv4(ipv6: string): string | null {
  const normalized = new URL(`http://[${ipv6}]/`).hostname.slice(1, -1); // e.g. ::ffff:7f00:1
  const m = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(normalized);
  if (!m) return null;
  const hi = parseInt(m[1]!, 16);
  const lo = parseInt(m[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

export function classifyAddress(address: string): AddressClass {
  const ip = address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''); // brackets, IPv6 zone id
  switch (isIP(ip)) {
    case 4:
      if (FORBIDDEN_V4.check(ip, 'ipv4')) return 'forbidden';
      return INTERNAL_V4.check(ip, 'ipv4') ? 'internal' : 'public';
    case 6: {
      if (FORBIDDEN_V6.check(ip, 'ipv6')) return 'forbidden';
      const v4 = mappedIpv4(ip);
      if (v4) return classifyAddress(v4) === 'forbidden' ? 'forbidden' : 'internal';
      return GLOBAL_UNICAST_V6.check(ip, 'ipv6') && !SPECIAL_V6.check(ip, 'ipv6') ? 'public' : 'internal';
    }
    default:
      return 'forbidden';
  }
}

export function isAllowedAddress(address: string, allowPrivate: boolean): boolean {
  const cls = classifyAddress(address);
  return cls === 'public' || (allowPrivate && cls === 'internal');
}

/** A destination the rules refuse; `message` is safe to show to the client and to record on an attempt. */
export class DestinationRefusedError extends Error {
  readonly code = 'WEBHOOK_DESTINATION_REFUSED';
}

/** The host name did not resolve (no such name, no address, timeout): a refusal a caller may choose to overlook. */
export class UnresolvedHostError extends DestinationRefusedError {}

const NON_PUBLIC = 'destination resolves to a non-public address';

// ---- name resolution (replaceable in tests) ----------------------------------------------------------------

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });
let resolver: Resolver = systemResolver;

/** Test-only: answer name lookups (creation checks and connect-time lookups) with `fn`; null restores DNS. */
export function setResolverForTests(fn: Resolver | null): void {
  resolver = fn ?? systemResolver;
}

const RESOLVE_TIMEOUT_MS = 5_000;

async function resolveAll(hostname: string): Promise<LookupAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new UnresolvedHostError(`host ${hostname} could not be resolved (timeout)`)), RESOLVE_TIMEOUT_MS);
  });
  try {
    const addresses = await Promise.race([resolver(hostname), timeout]);
    if (!addresses.length) throw new UnresolvedHostError(`host ${hostname} could not be resolved`);
    return addresses;
  } finally {
    clearTimeout(timer);
  }
}

function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

// ---- URL rules ------------------------------------------------------------------------------------------------

/** Scheme and credential rules, and the literal-IP check (no DNS). Returns the parsed URL. */
export function checkUrlShape(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DestinationRefusedError('must be an absolute URL');
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    throw new DestinationRefusedError('must be an https:// URL');
  }
  if (url.username || url.password || hasUserinfo(raw))
    throw new DestinationRefusedError('must not contain credentials (user info before @)');
  checkLiteralHost(url, allowPrivate);
  return url;
}

/**
 * Whether the URL's authority has a userinfo part, even an empty one (`https://:@host/`, `https://@host/`), which
 * the URL parser reports as empty `username` and `password`. Read from the text as the WHATWG parser reads it:
 * tabs and newlines are dropped, the authority of an http(s) URL starts after any run of `/` or `\` and ends
 * at the first `/`, `\`, `?` or `#`; any `@` in it ends a userinfo.
 */
export function hasUserinfo(raw: string): boolean {
  const text = raw.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '');
  const authority = /^[A-Za-z][A-Za-z0-9+.-]*:[/\\]*([^/\\?#]*)/.exec(text)?.[1] ?? '';
  return authority.includes('@');
}

/** Refuses a URL whose host is an IP literal (or localhost) outside the allowed ranges. */
function checkLiteralHost(url: URL, allowPrivate: boolean): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) {
    if (!isAllowedAddress(host, allowPrivate)) throw new DestinationRefusedError(NON_PUBLIC);
  } else if (isLocalhostName(host) && !allowPrivate) {
    throw new DestinationRefusedError(NON_PUBLIC);
  }
}

/**
 * The creation-time check of an endpoint URL: scheme, credentials, and every address the host resolves to.
 * Throws DestinationRefusedError with the reason.
 */
export async function checkDestination(raw: string, allowPrivate: boolean): Promise<void> {
  const url = checkUrlShape(raw, allowPrivate);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return;
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(host);
  } catch (error) {
    if (error instanceof DestinationRefusedError) throw error;
    throw new UnresolvedHostError(`host ${host} could not be resolved`);
  }
  if (addresses.some((a) => !isAllowedAddress(a.address, allowPrivate))) throw new DestinationRefusedError(NON_PUBLIC);
}

/**
 * The connect-time check: a `lookup` for http(s) agents that resolves the host and refuses the connection
 * unless every address is allowed. The socket then connects only to the addresses checked here.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname).then(
      (all) => {
        if (all.some((a) => !isAllowedAddress(a.address, allowPrivate))) {
          callback(new DestinationRefusedError(NON_PUBLIC), '');
          return;
        }
        const wanted = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        const first = wanted[0];
        if (!first) {
          callback(Object.assign(new Error(`no IPv${options.family} address for ${hostname}`), { code: 'ENOTFOUND' }), '');
        } else if (options.all) {
          callback(null, wanted);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}
