// One signed HTTP attempt: POST the envelope, follow same-origin redirects (re-checked at each hop), give up at
// the deadline, and describe what happened. Connections go through keep-alive agents whose `lookup` refuses
// any non-public address (src/net/destination-guard.ts), so the check holds for every resolution, redirects included.
import type { Agent } from 'node:http';
import { http } from '../../lib/node-http.ts';
import https from 'node:https';
import { DestinationRefusedError, checkUrlShape, guardedLookup } from '../../net/destination-guard.ts';
import { openSecret } from '../../lib/secrets.ts';
import { signerFor, type Signer } from './signing.ts';

export type AttemptOutcome = {
  success: boolean;
  /** null when no response arrived (timeout, DNS, TLS, connection error, refused destination). */
  statusCode: number | null;
  /** null on success; otherwise why, ≤ 500 characters. */
  error: string | null;
  /** null when nothing was sent (the destination was refused before connecting). */
  durationMs: number | null;
  attemptedAt: Date;
  completedAt: Date;
};

const MAX_REDIRECTS = 3;
const MAX_RESPONSE_BYTES = 64 * 1024; // the body is ignored; read a little so the socket can be reused
const USER_AGENT = 'messaging-service-webhooks/1.0';

class DeadlineError extends Error {}

const agents = new Map<string, Agent>();

/**
 * One keep-alive agent per scheme and SSRF mode: a socket opened under one mode is never reused under the other.
 * Up to 64 connections per origin, and as many kept open between batches (fewer would be closed after each batch and
 * opened again by the next one); the receiver's keep-alive timeout closes idle ones.
 */
function agentFor(protocol: string, allowPrivate: boolean): Agent {
  const key = `${protocol}|${allowPrivate}`;
  let agent = agents.get(key);
  if (!agent) {
    const options = {
      keepAlive: true,
      maxSockets: 64,
      maxFreeSockets: 64,
      scheduling: 'lifo' as const,
      lookup: guardedLookup(allowPrivate),
    };
    agent = protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    agents.set(key, agent);
  }
  return agent;
}

/** Closes pooled connections (tests and benchmarks that end their process). */
export function closeDeliveryAgents(): void {
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
}

/** Opens an endpoint's sealed secret (`v1:…`) into a signer; throws when it cannot be opened. */
export type OpenSigner = (sealedSecret: string) => Signer;

const openSigner: OpenSigner = (sealed) => signerFor(openSecret(sealed));

/**
 * A signer opener for one batch of attempts: each distinct secret is opened (and its HMAC key prepared) once, on
 * first use, instead of once per attempt. The opened keys live only as long as the returned function (the batch).
 */
export function batchSigners(): OpenSigner {
  const opened = new Map<string, Signer | Error>();
  return (sealed) => {
    let signer = opened.get(sealed);
    if (!signer) {
      try {
        signer = openSigner(sealed);
      } catch (error) {
        signer = error as Error;
      }
      opened.set(sealed, signer);
    }
    if (signer instanceof Error) throw signer;
    return signer;
  };
}

type Response = { status: number; location: string | undefined };

function postOnce(
  url: URL,
  headers: Record<string, string>,
  body: string,
  allowPrivate: boolean,
  deadline: number,
): Promise<Response & { reused: boolean }> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let reused = false;
    const finish = (error: Error | null, response?: Response) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(Object.assign(error, { reusedSocket: reused }));
      else resolve({ ...response!, reused });
    };
    const transport = url.protocol === 'https:' ? https : http;
    const req = transport.request(url, {
      method: 'POST',
      agent: agentFor(url.protocol, allowPrivate),
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': USER_AGENT,
      },
    });
    const timer = setTimeout(
      () => {
        const error = new DeadlineError();
        req.destroy(error);
        finish(error);
      },
      Math.max(0, deadline - performance.now()),
    );
    req.on('socket', () => {
      reused = req.reusedSocket;
    });
    req.on('response', (res) => {
      const response = { status: res.statusCode ?? 0, location: res.headers.location };
      let seen = 0;
      res.on('data', (chunk: Buffer) => {
        seen += chunk.length;
        if (seen > MAX_RESPONSE_BYTES) {
          res.destroy();
          finish(null, response);
        }
      });
      res.on('end', () => finish(null, response));
      res.on('error', (error) => finish(error));
      res.on('close', () => {
        if (res.complete) finish(null, response);
        else finish(Object.assign(new Error('connection reset'), { code: 'ECONNRESET' }));
      });
    });
    req.on('error', (error) => finish(error));
    req.end(body);
  });
}

function describe(error: unknown, timeoutMs: number): string {
  if (error instanceof DeadlineError) return `timeout after ${timeoutMs} ms`;
  if (error instanceof DestinationRefusedError) return error.message;
  const e = error as NodeJS.ErrnoException;
  switch (e.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `DNS lookup failed (${e.code})`;
  }
  if (e.code && /CERT|TLS|SSL/.test(e.code)) return `TLS error: ${e.code}`;
  return `${e.code ? `${e.code}: ` : ''}${e.message ?? String(error)}`.slice(0, 500);
}

/**
 * Sends `body` (the exact envelope) to `url`, signed for event `eventId`. Never throws: every failure is an
 * outcome. Redirects are followed on the same origin only (at most 3), re-posting the same signed body.
 */
export async function postEnvelope(input: {
  url: string;
  /** The endpoint's secret as stored (sealed, `v1:…`): opened here, only to sign, and kept no longer than `openSigner` keeps it. */
  sealedSecret: string;
  eventId: string;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
  /** How the secret is opened (a batch passes batchSigners()); by default, opened for this attempt alone. */
  openSigner?: OpenSigner;
}): Promise<AttemptOutcome> {
  const attemptedAt = new Date();
  const started = performance.now();
  const deadline = started + input.timeoutMs;
  const outcome = (o: Pick<AttemptOutcome, 'success' | 'statusCode' | 'error'>, sent = true): AttemptOutcome => ({
    ...o,
    durationMs: sent ? Math.round(performance.now() - started) : null,
    attemptedAt,
    completedAt: new Date(),
  });
  let headers: Record<string, string>;
  try {
    headers = (input.openSigner ?? openSigner)(input.sealedSecret)(input.eventId, input.body);
  } catch (error) {
    // Nothing is sent unsigned; the attempt fails (and is retried) with the reason.
    return outcome(
      { success: false, statusCode: null, error: `signing secret unavailable: ${(error as Error).message}`.slice(0, 500) },
      false,
    );
  }

  let url: URL;
  try {
    url = checkUrlShape(input.url, input.allowPrivate);
  } catch (error) {
    return outcome({ success: false, statusCode: null, error: describe(error, input.timeoutMs) }, false);
  }
  const origin = url.origin;
  for (let hop = 0; ; hop++) {
    let res: Response;
    try {
      try {
        res = await postOnce(url, headers, input.body, input.allowPrivate, deadline);
      } catch (error) {
        // A kept-alive socket the receiver closed just before we reused it: try once more on a fresh one.
        const e = error as NodeJS.ErrnoException & { reusedSocket?: boolean };
        if (!(e.code === 'ECONNRESET' && e.reusedSocket)) throw error;
        res = await postOnce(url, headers, input.body, input.allowPrivate, deadline);
      }
    } catch (error) {
      return outcome(
        { success: false, statusCode: null, error: describe(error, input.timeoutMs) },
        !(error instanceof DestinationRefusedError),
      );
    }
    if (res.status >= 200 && res.status < 300) return outcome({ success: true, statusCode: res.status, error: null });
    if (res.status < 300 || res.status >= 400 || !res.location) {
      return outcome({ success: false, statusCode: res.status, error: `HTTP ${res.status}` });
    }
    let next: URL;
    try {
      next = new URL(res.location, url);
    } catch {
      return outcome({ success: false, statusCode: res.status, error: `HTTP ${res.status} with an invalid Location` });
    }
    if (next.origin !== origin) {
      return outcome({ success: false, statusCode: res.status, error: `HTTP ${res.status}: redirect to another origin not followed` });
    }
    if (hop >= MAX_REDIRECTS) return outcome({ success: false, statusCode: res.status, error: `HTTP ${res.status}: too many redirects` });
    try {
      url = checkUrlShape(next.href, input.allowPrivate);
    } catch (error) {
      return outcome({ success: false, statusCode: res.status, error: describe(error, input.timeoutMs) });
    }
  }
}
