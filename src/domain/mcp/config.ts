// The MCP server configuration: reading it, saving it (destination rules, platform mapping, write-only
// credentials sealed at rest) and testing it (health-check.ts), and the platform mapping the save needs.
//
// Platform mapping: the link between an organization and its account on the messaging platform. A platform
// admin sets it with `admin set-platform-mapping --org … --account …`; organizations made by `create-org` have
// none, so their first saveMcpConfig answers 422 NO_PLATFORM_MAPPING until it is set.
//
// A save checks, in order: the platform mapping (without it nothing can be saved, whatever the body says), the
// destination rules of baseUrl and tokenUrl, the first-time credentials. The destination rules are the webhook
// ones, with one difference: a host name that does not resolve now (no such name yet, a DNS outage, a timeout)
// does not refuse the save. A save does not contact the server, every test applies the rules again to every
// address at connect time (src/net/guarded-fetch.ts), and a configuration must not become unsaveable because a resolver
// failed for a moment; a name that resolves now to a non-public address is refused at once.
import type { components } from '../../../generated/api.d.ts';
import { inTransaction, type Db } from '../../db/database.ts';
import * as q from '../../db/queries/mcp/configs.ts';
import * as mappings from '../../db/queries/mcp/platform-mappings.ts';
import type { McpChannel, StoredChannelHealth } from '../../db/tables/mcp.ts';
import { openSecret, sealSecret } from '../../lib/secrets.ts';
import { ApiError, invalidField, unprocessable } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import { DestinationRefusedError, UnresolvedHostError, checkDestination } from '../../net/destination-guard.ts';
import { checkChannels, type McpCredentials } from './health-check.ts';

type SaveBody = components['schemas']['McpConfigSaveRequest'];
type TestBody = components['schemas']['McpTestRequest'];

export type { McpConfigRow } from '../../db/queries/mcp/configs.ts';
const CHANNELS: readonly McpChannel[] = ['RCS', 'CHATAPP', 'SMS'];
export const MAX_PLATFORM_ACCOUNT_ID = 255;

const unknownHealth = (): StoredChannelHealth[] =>
  CHANNELS.map((channelType) => ({ channelType, status: 'unknown', latencyMs: null, error: null, checkedAt: null }));

/** The organization's configuration, or undefined before the first save. */
export function getConfig(tenant: Tenant): Promise<q.McpConfigRow | undefined> {
  return q.getMcpConfig(tenant.db, tenant.organizationId);
}

/**
 * 400 VALIDATION_ERROR on `field` unless the URL is an allowed destination (the webhook SSRF rules), a host name
 * that does not resolve now excepted (see the top of this file).
 */
async function assertDestination(field: string, url: string, allowPrivate: boolean): Promise<void> {
  try {
    await checkDestination(url, allowPrivate);
  } catch (error) {
    if (error instanceof UnresolvedHostError) return;
    if (error instanceof DestinationRefusedError) {
      const local = !allowPrivate && /non-public|https:\/\//.test(error.message);
      throw invalidField(
        field,
        `${field.split('.').pop()} ${error.message}${local ? ' (for local development only, start the server with WEBHOOK_ALLOW_PRIVATE=1 to allow http:// and private addresses)' : ''}`,
      );
    }
    throw error;
  }
}

/** `••••` + the last 4 characters of the secret part; only `••••` for a secret shorter than 8 characters. */
function hintOf(c: McpCredentials): string {
  const secret = c.type === 'bearer' ? c.token : c.type === 'basic' ? c.password : c.clientSecret;
  return secret.length >= 8 ? `••••${secret.slice(-4)}` : '••••';
}

/** Only the fields of the credentials' type, in a fixed order (what is sealed). */
function normalize(c: NonNullable<SaveBody['credentials']>): McpCredentials {
  switch (c.type) {
    case 'bearer':
      return { type: 'bearer', token: c.token };
    case 'basic':
      return { type: 'basic', username: c.username, password: c.password };
    case 'oauth2_client_credentials':
      return {
        type: 'oauth2_client_credentials',
        clientId: c.clientId,
        clientSecret: c.clientSecret,
        tokenUrl: c.tokenUrl,
        ...(c.scope ? { scope: c.scope } : {}),
      };
  }
}

/**
 * Creates or replaces the configuration. 422 NO_PLATFORM_MAPPING without a platform mapping, then 400 on a
 * refused baseUrl/tokenUrl, then 400 without credentials the first time. Health goes back to `unknown` when the
 * base URL or the credentials change.
 */
export async function saveConfig(tenant: Tenant, services: Services, body: SaveBody): Promise<q.McpConfigRow> {
  // A mapping is never removed (set-platform-mapping only creates or replaces it): read once, before the rest.
  if (!(await mappings.getPlatformMapping(tenant.db, tenant.organizationId))) {
    throw unprocessable(
      'NO_PLATFORM_MAPPING',
      'This organization has no platform mapping (its account on the messaging platform); a platform admin sets it up. Nothing was saved.',
    );
  }
  const allowPrivate = services.config.webhookAllowPrivate;
  await assertDestination('body.baseUrl', body.baseUrl, allowPrivate); // before the transaction: DNS may be slow
  const sent = body.credentials ? normalize(body.credentials) : undefined;
  if (sent?.type === 'oauth2_client_credentials') await assertDestination('body.credentials.tokenUrl', sent.tokenUrl, allowPrivate);
  return inTransaction(tenant.db, async (tx) => {
    const current = await q.getMcpConfig(tx, tenant.organizationId, { forUpdate: true });
    if (!current && !sent)
      throw invalidField('body.credentials', 'credentials are required the first time the configuration is saved', 'VALIDATION_ERROR');
    let sealed: string;
    let type: McpCredentials['type'];
    let hint: string;
    let credentialsChanged: boolean;
    if (sent) {
      const plain = JSON.stringify(sent);
      credentialsChanged = !current || openStored(current.credentials) !== plain;
      sealed = sealSecret(plain);
      type = sent.type;
      hint = hintOf(sent);
    } else {
      credentialsChanged = false;
      sealed = current!.credentials;
      type = current!.credentials_type;
      hint = current!.credentials_hint;
    }
    const reset = !current || credentialsChanged || current.base_url !== body.baseUrl;
    return q.upsertMcpConfig(tx, tenant.organizationId, {
      baseUrl: body.baseUrl,
      credentialsType: type,
      sealedCredentials: sealed,
      credentialsHint: hint,
      health: reset ? unknownHealth() : current.health,
    });
  });
}

/** The stored credentials' JSON; a value the key cannot open counts as different (it is replaced). */
function openStored(sealed: string): string | undefined {
  try {
    return openSecret(sealed);
  } catch {
    return undefined;
  }
}

export type TestOutcome = { success: boolean; results: StoredChannelHealth[]; testedAt: Date };

/**
 * Checks one channel (`CA` is `CHATAPP`) or all three against the configured server and stores the results as
 * the configuration's health. 400 NOT_CONFIGURED before the first save. A failing server is a result, never an error.
 */
export async function testConfig(tenant: Tenant, services: Services, body: TestBody | undefined): Promise<TestOutcome> {
  const config = await q.getMcpConfig(tenant.db, tenant.organizationId);
  if (!config)
    throw new ApiError(400, 'NOT_CONFIGURED', 'No MCP server is configured for this organization: save one with PUT /v1/mcp/config first.');
  const wanted = body?.channelType;
  const channels: McpChannel[] = wanted ? [wanted === 'CA' ? 'CHATAPP' : wanted] : [...CHANNELS];
  const plain = openStored(config.credentials);
  const results = plain
    ? await checkChannels(
        { baseUrl: config.base_url, credentials: JSON.parse(plain) as McpCredentials, allowPrivate: services.config.webhookAllowPrivate },
        channels,
      )
    : channels.map((channelType): StoredChannelHealth => ({
        channelType,
        status: 'unhealthy',
        latencyMs: null,
        error: "the stored credentials cannot be decrypted with this server's SECRETS_KEY: save them again",
        checkedAt: new Date().toISOString(),
      }));
  const byChannel = new Map(config.health.map((h) => [h.channelType, h]));
  for (const r of results) byChannel.set(r.channelType, r);
  await q.setMcpHealth(
    tenant.db,
    tenant.organizationId,
    { baseUrl: config.base_url, sealedCredentials: config.credentials },
    CHANNELS.map((c) => byChannel.get(c) ?? unknownHealth().find((h) => h.channelType === c)!),
  );
  return { success: results.every((r) => r.status === 'healthy'), results, testedAt: new Date() };
}

/**
 * Sets (creates or replaces) an organization's platform mapping: the admin CLI's `set-platform-mapping`, run by a
 * platform admin with the system database. undefined when there is no such organization.
 */
export async function setPlatformMapping(
  db: Db,
  organizationId: string,
  platformAccountId: string,
): Promise<mappings.PlatformMappingRow | undefined> {
  return inTransaction(db, async (tx) => {
    if (!(await mappings.organizationExists(tx, organizationId))) return undefined;
    return mappings.upsertPlatformMapping(tx, organizationId, platformAccountId);
  });
}
