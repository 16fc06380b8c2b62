// The client of a request as the public forms see it. The address is express's `req.ip`: the socket's address,
// unless TRUST_PROXY names the proxies in front of the server (express's `trust proxy`, set in src/app.ts), in
// which case it is the first X-Forwarded-For entry, from the right, that no trusted proxy added. A header a
// client sets itself is therefore never believed unless the operator said so.
import type { Request } from 'express';
import type { PublicClient } from '../domain/acquisition/client.ts';

const MAX_USER_AGENT_CHARS = 1000;

export function clientOf(req: Request): PublicClient {
  const ua = req.headers['user-agent'];
  return { ip: req.ip ?? null, userAgent: typeof ua === 'string' ? ua.slice(0, MAX_USER_AGENT_CHARS) : null };
}
