// What "a channel's health" means against an MCP server, and the check itself.
//
// The server must expose a tool `check_channel` taking `{channel: 'RCS' | 'CHATAPP' | 'SMS'}`. Per channel:
// - healthy: the call returns a result without `isError` within HEALTHY_WITHIN_MS (2 s);
// - degraded: the same, but slower (up to CALL_TIMEOUT_MS);
// - unhealthy: the result has `isError`, the call times out, the server is unreachable, refuses the credentials,
//   refuses the destination (SSRF rules), or has no `check_channel` tool (on any page of its tools/list);
//   `error` says which (never a credential).
// One connection per test (the official SDK's Client over Streamable HTTP), through guardedFetch, with the
// credentials as headers. Nothing here throws for a failing server: every failure is a channel result.
import type * as ClientSdk from '@modelcontextprotocol/sdk/client/index.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type * as HttpSdk from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpChannel, StoredChannelHealth } from '../../db/tables/mcp.ts';
import { DestinationRefusedError } from '../../net/destination-guard.ts';
import { guardedFetch, type GuardedFetch } from '../../net/guarded-fetch.ts';

const CHECK_TOOL = 'check_channel';
const HEALTHY_WITHIN_MS = 2_000;
const CALL_TIMEOUT_MS = 10_000;
const CONNECT_TIMEOUT_MS = 10_000;
const MAX_ERROR_CHARS = 500;
const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;
/** tools/list pages read looking for check_channel (each response is bounded by src/net/guarded-fetch.ts). */
const MAX_TOOL_PAGES = 20;

export type McpCredentials =
  | { type: 'bearer'; token: string }
  | { type: 'basic'; username: string; password: string }
  | { type: 'oauth2_client_credentials'; clientId: string; clientSecret: string; tokenUrl: string; scope?: string };

export type CheckTarget = { baseUrl: string; credentials: McpCredentials; allowPrivate: boolean };

class CheckError extends Error {}

/** Checks `channels` in order on one connection; always resolves, one result per channel. */
export async function checkChannels(target: CheckTarget, channels: readonly McpChannel[]): Promise<StoredChannelHealth[]> {
  const secrets = new Set(secretsOf(target.credentials));
  const results = await check(target, channels, secrets);
  // A server may echo what it was sent in an error body: no secret ends up in a stored or answered `error`.
  return results.map((r) => (r.error ? { ...r, error: redact(r.error, secrets) } : r));
}

function secretsOf(c: McpCredentials): string[] {
  switch (c.type) {
    case 'bearer':
      return [c.token];
    case 'basic':
      return [c.password, Buffer.from(`${c.username}:${c.password}`, 'utf8').toString('base64')];
    case 'oauth2_client_credentials':
      return [c.clientSecret];
  }
}

function redact(text: string, secrets: ReadonlySet<string>): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join('••••');
  return out;
}

type Sdk = typeof ClientSdk & typeof HttpSdk;
/** The SDK, loaded on the first check: the process does not need it to start (bench part a). */
let sdk: Sdk | undefined;
async function loadSdk(): Promise<Sdk> {
  if (!sdk) {
    const [client, http] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    ]);
    sdk = { ...client, ...http };
  }
  return sdk;
}

async function check(target: CheckTarget, channels: readonly McpChannel[], secrets: Set<string>): Promise<StoredChannelHealth[]> {
  const { Client, StreamableHTTPClientTransport } = await loadSdk();
  const fetch = guardedFetch(target.allowPrivate);
  const client = new Client({ name: 'messaging-service', version: '1.0.0' });
  let transport: StreamableHTTPClientTransport | undefined;
  try {
    let tools: Set<string>;
    try {
      const headers = await authHeaders(target.credentials, fetch);
      secrets.add(headers.Authorization!.replace(/^\w+ /, '')); // an OAuth 2.0 access token too
      transport = new StreamableHTTPClientTransport(new URL(target.baseUrl), { fetch, requestInit: { headers } });
      await withTimeout(client.connect(transport, { timeout: CONNECT_TIMEOUT_MS }), CONNECT_TIMEOUT_MS, 'connecting to the MCP server');
      tools = await toolNames(client);
    } catch (error) {
      const reason = `cannot reach the MCP server: ${describe(error)}`;
      return channels.map((channel) => unhealthy(channel, reason, null));
    }
    if (!tools.has(CHECK_TOOL)) {
      return channels.map((channel) => unhealthy(channel, `the MCP server has no ${CHECK_TOOL} tool`, null));
    }
    const results: StoredChannelHealth[] = [];
    for (const channel of channels) results.push(await checkOne(client, channel));
    return results;
  } finally {
    await client.close().catch(() => undefined);
    fetch.close();
  }
}

/**
 * The server's tool names, following tools/list's `nextCursor` (a server may page its tools, as ours does) until
 * `check_channel` is found, the last page, or MAX_TOOL_PAGES pages.
 */
async function toolNames(client: Client): Promise<Set<string>> {
  const names = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const listed = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: CALL_TIMEOUT_MS });
    for (const tool of listed.tools) names.add(tool.name);
    if (names.has(CHECK_TOOL) || !listed.nextCursor) break;
    cursor = listed.nextCursor;
  }
  return names;
}

async function checkOne(client: Client, channel: McpChannel): Promise<StoredChannelHealth> {
  const started = performance.now();
  try {
    const result = await client.callTool({ name: CHECK_TOOL, arguments: { channel } }, undefined, {
      timeout: CALL_TIMEOUT_MS,
      maxTotalTimeout: CALL_TIMEOUT_MS,
    });
    const latencyMs = Math.round(performance.now() - started);
    const checkedAt = new Date().toISOString();
    if (result.isError)
      return {
        channelType: channel,
        status: 'unhealthy',
        latencyMs,
        error: clip(`${CHECK_TOOL} failed: ${toolText(result.content) || 'isError'}`),
        checkedAt,
      };
    if (latencyMs > HEALTHY_WITHIN_MS) {
      return {
        channelType: channel,
        status: 'degraded',
        latencyMs,
        error: `slow response (${latencyMs} ms, healthy within ${HEALTHY_WITHIN_MS} ms)`,
        checkedAt,
      };
    }
    return { channelType: channel, status: 'healthy', latencyMs, error: null, checkedAt };
  } catch (error) {
    return unhealthy(channel, `${CHECK_TOOL} failed: ${describe(error)}`, null);
  }
}

function unhealthy(channel: McpChannel, error: string, latencyMs: number | null): StoredChannelHealth {
  return { channelType: channel, status: 'unhealthy', latencyMs, error: clip(error), checkedAt: new Date().toISOString() };
}

function toolText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .filter(
      (c): c is { type: 'text'; text: string } =>
        typeof c === 'object' &&
        c !== null &&
        (c as { type?: unknown }).type === 'text' &&
        typeof (c as { text?: unknown }).text === 'string',
    )
    .map((c) => c.text)
    .join(' ');
}

function describe(error: unknown): string {
  if (error instanceof DestinationRefusedError) return `destination refused: ${error.message}`;
  if (error instanceof CheckError) return error.message;
  if (sdk && error instanceof sdk.StreamableHTTPError && typeof error.code === 'number') return `HTTP ${error.code}: ${error.message}`;
  const e = error as { message?: string; code?: string; cause?: { message?: string; code?: string } };
  const code = e.code ?? e.cause?.code;
  const message = e.message ?? String(error);
  return code && typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message;
}

const clip = (text: string) => (text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS - 1)}…` : text);

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CheckError(`timed out after ${ms / 1000} s ${what}`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** The headers that carry the credentials; oauth2 first exchanges the client credentials at tokenUrl. */
async function authHeaders(credentials: McpCredentials, fetch: GuardedFetch): Promise<Record<string, string>> {
  switch (credentials.type) {
    case 'bearer':
      return { Authorization: `Bearer ${credentials.token}` };
    case 'basic':
      return { Authorization: `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`, 'utf8').toString('base64')}` };
    case 'oauth2_client_credentials':
      return { Authorization: `Bearer ${await clientCredentialsToken(credentials, fetch)}` };
  }
}

async function clientCredentialsToken(
  c: Extract<McpCredentials, { type: 'oauth2_client_credentials' }>,
  fetch: GuardedFetch,
): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (c.scope) form.set('scope', c.scope);
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new CheckError(`token request timed out after ${CONNECT_TIMEOUT_MS / 1000} s`)),
    CONNECT_TIMEOUT_MS,
  );
  try {
    const res = await fetch(c.tokenUrl, {
      method: 'POST',
      signal: controller.signal,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(c.clientId)}:${encodeURIComponent(c.clientSecret)}`, 'utf8').toString('base64')}`,
      },
      body: form.toString(),
    });
    const text = await res.text();
    if (text.length > MAX_TOKEN_RESPONSE_BYTES) throw new CheckError('token response too large');
    if (!res.ok) throw new CheckError(`token request answered HTTP ${res.status}`);
    let token: unknown;
    try {
      token = (JSON.parse(text) as { access_token?: unknown }).access_token;
    } catch {
      throw new CheckError('token response is not JSON');
    }
    if (typeof token !== 'string' || !token) throw new CheckError('token response has no access_token');
    return token;
  } catch (error) {
    throw new CheckError(`OAuth 2.0 token request failed: ${describe(error)}`);
  } finally {
    clearTimeout(timer);
  }
}
