// MCP section through HTTP: the platform mapping set with the admin CLI, saving (destination rules, write-only
// credentials sealed at rest, masking), reading, and testing against a real MCP server made with the official SDK
// (`check_channel`: healthy for RCS and SMS, isError for CHATAPP; bearer token checked), tenancy.
import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { freePort } from './support/processes.ts';
import { setResolverForTests } from '../src/net/destination-guard.ts';

const run = promisify(execFile);
const env = () => ({ ...process.env, DATABASE_URL: inject('databaseUrl'), NODE_ENV: 'test', RUN_WORKERS: '0' });
const admin = (...args: string[]) => run(process.execPath, ['src/cli/admin.ts', ...args], { env: env() });

const TOKEN = 'mcp_test_token_0123456789_9f3a';
const CLIENT_ID = 'mcp-client';
const CLIENT_SECRET = 'oauth_client_secret_77aa';

/** A real MCP server (stateless Streamable HTTP), checking `Authorization: Bearer TOKEN`; /token is an OAuth 2.0 token endpoint. */
function mcpServerApp(opts: { slowMs?: number; pagedTools?: boolean } = {}) {
  const calls: string[] = [];
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.url === '/token' && req.method === 'POST') {
      let body = '';
      for await (const chunk of req) body += String(chunk);
      const expected = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
      const ok = req.headers.authorization === expected && new URLSearchParams(body).get('grant_type') === 'client_credentials';
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
      res.end(JSON.stringify(ok ? { access_token: TOKEN, token_type: 'Bearer', expires_in: 3600 } : { error: 'invalid_client' }));
      return;
    }
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      // Echoes what it was sent, as careless servers do: the service must not store or answer it.
      res
        .writeHead(401, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: 'unauthorized', received: req.headers.authorization }));
      return;
    }
    const server = new McpServer({ name: 'test-mcp', version: '1.0.0' });
    server.registerTool(
      'check_channel',
      { description: 'Checks a messaging channel', inputSchema: { channel: z.enum(['RCS', 'CHATAPP', 'SMS']) } },
      async ({ channel }) => {
        calls.push(channel);
        if (opts.slowMs) await new Promise((r) => setTimeout(r, opts.slowMs));
        if (channel === 'CHATAPP') return { isError: true, content: [{ type: 'text', text: 'chat-app gateway down' }] };
        return { content: [{ type: 'text', text: `${channel} ok` }] };
      },
    );
    if (opts.pagedTools) {
      // tools/list in two pages, check_channel on the second.
      server.server.setRequestHandler(ListToolsRequestSchema, (list) =>
        list.params?.cursor === 'page-2'
          ? {
              tools: [
                {
                  name: 'check_channel',
                  inputSchema: { type: 'object', properties: { channel: { type: 'string', enum: ['RCS', 'CHATAPP', 'SMS'] } } },
                },
              ],
            }
          : { tools: [{ name: 'other_tool', inputSchema: { type: 'object' } }], nextCursor: 'page-2' },
      );
    }
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };
  const http: Server = createServer((req, res) => {
    handler(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  return { http, calls };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

let srv: TestServer;
let strict: TestServer;
const mcp = mcpServerApp();
const slow = mcpServerApp({ slowMs: 2_200 });
const paged = mcpServerApp({ pagedTools: true });
let mcpUrl: string;
let slowUrl: string;
let pagedUrl: string;

beforeAll(async () => {
  srv = await startTestServer({ config: { webhookAllowPrivate: true } });
  strict = await startTestServer();
  mcpUrl = await listen(mcp.http);
  slowUrl = await listen(slow.http);
  pagedUrl = await listen(paged.http);
});

afterAll(async () => {
  mcp.http.closeAllConnections();
  slow.http.closeAllConnections();
  paged.http.closeAllConnections();
  await new Promise((r) => mcp.http.close(r));
  await new Promise((r) => slow.http.close(r));
  await new Promise((r) => paged.http.close(r));
  await srv?.close();
  await strict?.close();
});

const bearer = { type: 'bearer', token: TOKEN };

async function mappedOrg(server: TestServer = srv) {
  const org = await server.newOrg('MCP org');
  const { stdout } = await admin(
    'set-platform-mapping',
    '--org',
    org.organizationId,
    '--account',
    `acct-${org.organizationId.slice(0, 8)}`,
  );
  expect(JSON.parse(stdout)).toMatchObject({
    organizationId: org.organizationId,
    platformAccountId: `acct-${org.organizationId.slice(0, 8)}`,
  });
  return { id: org.organizationId, key: org.apiKey.secret };
}

describe('platform mapping (admin CLI)', () => {
  it('set-platform-mapping prints one JSON object, replaces the account on a second run, and refuses bad usage with exit 2', async () => {
    const org = await srv.newOrg('Mapping org');
    const first = JSON.parse((await admin('set-platform-mapping', '--org', org.organizationId, '--account', 'acct-1')).stdout);
    expect(first).toEqual({
      organizationId: org.organizationId,
      platformAccountId: 'acct-1',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const second = JSON.parse((await admin('set-platform-mapping', '--org', org.organizationId, '--account', 'acct-2')).stdout);
    expect(second.platformAccountId).toBe('acct-2');
    for (const args of [
      ['set-platform-mapping', '--org', org.organizationId],
      ['set-platform-mapping', '--org', '00000000-0000-4000-8000-000000000000', '--account', 'x'],
      ['set-platform-mapping', '--org', 'not-a-uuid', '--account', 'x'],
    ]) {
      const err = (await admin(...args).catch((e: unknown) => e)) as { code: number; stderr: string };
      expect(err.code).toBe(2);
      expect(err.stderr).toContain('set-platform-mapping --org');
    }
  });
});

describe('saveMcpConfig / getMcpConfig', () => {
  it('answers configured: false before any save, 422 NO_PLATFORM_MAPPING without a mapping (nothing saved)', async () => {
    const org = await srv.newOrg('Unmapped org');
    const key = org.apiKey.secret;
    expect((await call(srv, 'GET', '/v1/mcp/config', { key })).body).toEqual({ configured: false, data: null });
    const put = await call(srv, 'PUT', '/v1/mcp/config', { key, body: { baseUrl: `${mcpUrl}/mcp`, credentials: bearer } });
    expect(put.status).toBe(422);
    expect(put.body.code).toBe('NO_PLATFORM_MAPPING');
    expect((await call(srv, 'GET', '/v1/mcp/config', { key })).body).toEqual({ configured: false, data: null });
  });

  it('after the CLI mapping: saves, masks the credentials in every answer and seals them at rest', async () => {
    const org = await mappedOrg();
    const first = await call(srv, 'PUT', '/v1/mcp/config', { key: org.key, body: { baseUrl: `${mcpUrl}/mcp` } });
    expect(first.status).toBe(400);
    expect(first.body.details[0].field).toBe('body.credentials');

    const put = await call(srv, 'PUT', '/v1/mcp/config', { key: org.key, body: { baseUrl: `${mcpUrl}/mcp`, credentials: bearer } });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({
      baseUrl: `${mcpUrl}/mcp`,
      credentialsSet: true,
      credentialsType: 'bearer',
      credentialsHint: '••••9f3a',
    });
    expect(put.body.data.health).toEqual(
      ['RCS', 'CHATAPP', 'SMS'].map((channelType) => ({ channelType, status: 'unknown', latencyMs: null, error: null, checkedAt: null })),
    );
    expect(put.text).not.toContain(TOKEN);
    const get = await call(srv, 'GET', '/v1/mcp/config', { key: org.key });
    expect(get.body.configured).toBe(true);
    expect(get.body.data).toEqual(put.body.data);
    expect(get.text).not.toContain(TOKEN);

    const row = await srv.context.db.selectFrom('mcp_configs').selectAll().where('organization_id', '=', org.id).executeTakeFirstOrThrow();
    expect(row.credentials.startsWith('v1:')).toBe(true);
    expect(JSON.stringify(row)).not.toContain(TOKEN);
    expect(JSON.stringify(row)).not.toContain(TOKEN.slice(0, 12));
  });

  it('refuses a URL with credentials, and on a server without WEBHOOK_ALLOW_PRIVATE http:// and loopback', async () => {
    const org = await mappedOrg();
    const withUser = await call(srv, 'PUT', '/v1/mcp/config', {
      key: org.key,
      body: { baseUrl: 'https://user:pass@mcp.example.com/mcp', credentials: bearer },
    });
    expect(withUser.status).toBe(400);
    expect(withUser.body.details[0].field).toBe('body.baseUrl');
    expect(withUser.body.details[0].message).toContain('credentials');

    const strictOrg = await mappedOrg(strict);
    for (const baseUrl of ['http://mcp.example.com/mcp', 'https://127.0.0.1/mcp', `${mcpUrl}/mcp`, 'ftp://mcp.example.com/']) {
      const res = await call(strict, 'PUT', '/v1/mcp/config', { key: strictOrg.key, body: { baseUrl, credentials: bearer } });
      expect(res.status, baseUrl).toBe(400);
      expect(res.body.details[0].field).toBe('body.baseUrl');
    }
    const tokenUrl = await call(strict, 'PUT', '/v1/mcp/config', {
      key: strictOrg.key,
      body: {
        baseUrl: 'https://93.184.216.34/mcp',
        credentials: { type: 'oauth2_client_credentials', clientId: 'a', clientSecret: 'b', tokenUrl: 'https://10.0.0.1/token' },
      },
    });
    expect(tokenUrl.status).toBe(400);
    expect(tokenUrl.body.details[0].field).toBe('body.credentials.tokenUrl');
    expect((await call(strict, 'GET', '/v1/mcp/config', { key: strictOrg.key })).body.configured).toBe(false);
  });

  it('checks the platform mapping first, and saves a host name that does not resolve now (refusing one that resolves inside)', async () => {
    const addresses: Record<string, string> = { 'mcp.inside.example': '10.1.2.3', 'mcp.public.example': '93.184.216.34' };
    setResolverForTests(async (hostname) => {
      const address = addresses[hostname];
      if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return [{ address, family: 4 }];
    });
    try {
      // Without a mapping: 422 whatever the URL (a name that does not resolve, a refused scheme, an inside address).
      const unmapped = (await strict.newOrg('Unmapped strict org')).apiKey.secret;
      for (const baseUrl of ['https://mcp.not-yet.example/mcp', 'http://mcp.public.example/mcp', 'https://mcp.inside.example/mcp']) {
        const res = await call(strict, 'PUT', '/v1/mcp/config', { key: unmapped, body: { baseUrl, credentials: bearer } });
        expect(res.status, baseUrl).toBe(422);
        expect(res.body.code).toBe('NO_PLATFORM_MAPPING');
      }
      const org = await mappedOrg(strict);
      // A name that resolves now to a private address is refused at once.
      const inside = await call(strict, 'PUT', '/v1/mcp/config', {
        key: org.key,
        body: { baseUrl: 'https://mcp.inside.example/mcp', credentials: bearer },
      });
      expect(inside.status).toBe(400);
      expect(inside.body.details[0]).toMatchObject({ field: 'body.baseUrl', message: expect.stringContaining('non-public') });
      // A name that does not resolve now is saved; the test says why it cannot connect.
      const later = await call(strict, 'PUT', '/v1/mcp/config', {
        key: org.key,
        body: {
          baseUrl: 'https://mcp.not-yet.example/mcp',
          credentials: {
            type: 'oauth2_client_credentials',
            clientId: 'a',
            clientSecret: 'b-secret-1234',
            tokenUrl: 'https://auth.not-yet.example/token',
          },
        },
      });
      expect(later.status, later.text).toBe(200);
      expect(later.body.data).toMatchObject({ baseUrl: 'https://mcp.not-yet.example/mcp', credentialsType: 'oauth2_client_credentials' });
      const tested = await call(strict, 'POST', '/v1/mcp/test', { key: org.key, body: { channelType: 'SMS' } });
      expect(tested.status).toBe(200);
      expect(tested.body.data.results[0]).toMatchObject({
        channelType: 'SMS',
        status: 'unhealthy',
        error: expect.stringContaining('ENOTFOUND auth.not-yet.example'),
      });
    } finally {
      setResolverForTests(null);
    }
  });

  it('another organization never sees the configuration', async () => {
    const a = await mappedOrg();
    const b = await mappedOrg();
    expect((await call(srv, 'PUT', '/v1/mcp/config', { key: a.key, body: { baseUrl: `${mcpUrl}/mcp`, credentials: bearer } })).status).toBe(
      200,
    );
    expect((await call(srv, 'GET', '/v1/mcp/config', { key: b.key })).body).toEqual({ configured: false, data: null });
    const testB = await call(srv, 'POST', '/v1/mcp/test', { key: b.key, body: {} });
    expect(testB.status).toBe(400);
    expect(testB.body.code).toBe('NOT_CONFIGURED');
    const saveB = await call(srv, 'PUT', '/v1/mcp/config', {
      key: b.key,
      body: { baseUrl: `${mcpUrl}/other`, credentials: { type: 'basic', username: 'u', password: 'pw' } },
    });
    expect(saveB.body.data).toMatchObject({ baseUrl: `${mcpUrl}/other`, credentialsType: 'basic', credentialsHint: '••••' });
    expect((await call(srv, 'GET', '/v1/mcp/config', { key: a.key })).body.data.baseUrl).toBe(`${mcpUrl}/mcp`);
  });
});

describe('testMcpConfig', () => {
  it('400 NOT_CONFIGURED before any save', async () => {
    const org = await mappedOrg();
    const res = await call(srv, 'POST', '/v1/mcp/test', { key: org.key });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('NOT_CONFIGURED');
  });

  it('checks every channel through check_channel; the results become the stored health; CA is CHATAPP', async () => {
    const org = await mappedOrg();
    await call(srv, 'PUT', '/v1/mcp/config', { key: org.key, body: { baseUrl: `${mcpUrl}/mcp`, credentials: bearer } });
    const all = await call(srv, 'POST', '/v1/mcp/test', { key: org.key, body: {} });
    expect(all.status).toBe(200);
    expect(all.body.data.success).toBe(false);
    const [rcs, chat, sms] = all.body.data.results;
    expect(rcs).toMatchObject({
      channelType: 'RCS',
      status: 'healthy',
      error: null,
      latencyMs: expect.any(Number),
      checkedAt: expect.any(String),
    });
    expect(chat).toMatchObject({ channelType: 'CHATAPP', status: 'unhealthy', error: expect.stringContaining('chat-app gateway down') });
    expect(sms).toMatchObject({ channelType: 'SMS', status: 'healthy' });
    expect(all.text).not.toContain(TOKEN);

    const stored = (await call(srv, 'GET', '/v1/mcp/config', { key: org.key })).body.data.health;
    expect(stored.map((h: { status: string }) => h.status)).toEqual(['healthy', 'unhealthy', 'healthy']);

    const ca = await call(srv, 'POST', '/v1/mcp/test', { key: org.key, body: { channelType: 'CA' } });
    expect(ca.body.data.results).toEqual([expect.objectContaining({ channelType: 'CHATAPP', status: 'unhealthy' })]);
    const one = await call(srv, 'POST', '/v1/mcp/test', { key: org.key, body: { channelType: 'SMS' } });
    expect(one.body.data).toMatchObject({ success: true, results: [expect.objectContaining({ channelType: 'SMS', status: 'healthy' })] });

    // Saving the same URL without credentials keeps them and the health; new credentials reset it.
    const same = await call(srv, 'PUT', '/v1/mcp/config', { key: org.key, body: { baseUrl: `${mcpUrl}/mcp` } });
    expect(same.body.data.credentialsHint).toBe('••••9f3a');
    expect(same.body.data.health.map((h: { status: string }) => h.status)).toEqual(['healthy', 'unhealthy', 'healthy']);
    const wrong = await call(srv, 'PUT', '/v1/mcp/config', {
      key: org.key,
      body: { baseUrl: `${mcpUrl}/mcp`, credentials: { type: 'bearer', token: 'wrong-token-abcd' } },
    });
    expect(wrong.body.data.health.map((h: { status: string }) => h.status)).toEqual(['unknown', 'unknown', 'unknown']);
    expect(wrong.body.data.credentialsHint).toBe('••••abcd');
    const refused = await call(srv, 'POST', '/v1/mcp/test', { key: org.key });
    expect(refused.status).toBe(200);
    expect(refused.body.data.results.map((r: { status: string }) => r.status)).toEqual(['unhealthy', 'unhealthy', 'unhealthy']);
    expect(refused.body.data.results[0].error).toMatch(/cannot reach the MCP server: HTTP 401/);
    expect(refused.body.data.results[0].error).toContain('Bearer ••••');
    expect(refused.text).not.toContain('wrong-token-abcd');
    const row = await srv.context.db
      .selectFrom('mcp_configs')
      .select('health')
      .where('organization_id', '=', org.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row.health)).not.toContain('wrong-token-abcd');
  });

  it('finds check_channel on a later page of the server’s tools/list', async () => {
    const org = await mappedOrg();
    await call(srv, 'PUT', '/v1/mcp/config', { key: org.key, body: { baseUrl: `${pagedUrl}/mcp`, credentials: bearer } });
    const res = await call(srv, 'POST', '/v1/mcp/test', { key: org.key, body: { channelType: 'SMS' } });
    expect(res.body.data).toMatchObject({ success: true, results: [expect.objectContaining({ channelType: 'SMS', status: 'healthy' })] });
    expect(paged.calls).toEqual(['SMS']);
  });

  it('over POST /mcp, a batch whose client went away runs none of its waiting requests', async () => {
    const org = await mappedOrg();
    await call(srv, 'PUT', '/v1/mcp/config', { key: org.key, body: { baseUrl: `${slowUrl}/mcp`, credentials: bearer } });
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'testMcpConfig', arguments: { body: { channelType: 'RCS' } } } }, // 2.2 s
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'createContact', arguments: { body: { phone: '+14155553001' } } } },
    ];
    const gone = new AbortController();
    const sent = fetch(`${srv.baseUrl}/mcp`, {
      method: 'POST',
      signal: gone.signal,
      headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(batch),
    }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
    gone.abort();
    await sent;
    await new Promise((r) => setTimeout(r, 3_000)); // the slow check is over
    expect((await call(srv, 'GET', '/v1/contacts', { key: org.key })).body.pagination.total).toBe(0);
  }, 20_000);

  it('an unreachable server is 200 with every channel unhealthy', async () => {
    const org = await mappedOrg();
    const port = await freePort();
    await call(srv, 'PUT', '/v1/mcp/config', { key: org.key, body: { baseUrl: `http://127.0.0.1:${port}/mcp`, credentials: bearer } });
    const res = await call(srv, 'POST', '/v1/mcp/test', { key: org.key, body: {} });
    expect(res.status).toBe(200);
    expect(res.body.data.success).toBe(false);
    expect(res.body.data.results).toHaveLength(3);
    for (const r of res.body.data.results)
      expect(r).toMatchObject({ status: 'unhealthy', latencyMs: null, error: expect.stringMatching(/cannot reach the MCP server/) });
  });

  it('OAuth 2.0 client credentials: the token from tokenUrl is used as a bearer token', async () => {
    const org = await mappedOrg();
    const save = await call(srv, 'PUT', '/v1/mcp/config', {
      key: org.key,
      body: {
        baseUrl: `${mcpUrl}/mcp`,
        credentials: { type: 'oauth2_client_credentials', clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, tokenUrl: `${mcpUrl}/token` },
      },
    });
    expect(save.status).toBe(200);
    expect(save.body.data).toMatchObject({ credentialsType: 'oauth2_client_credentials', credentialsHint: '••••77aa' });
    expect(save.text).not.toContain(CLIENT_SECRET);
    const res = await call(srv, 'POST', '/v1/mcp/test', { key: org.key, body: { channelType: 'RCS' } });
    expect(res.body.data).toMatchObject({ success: true, results: [expect.objectContaining({ channelType: 'RCS', status: 'healthy' })] });
  });

  it('a check slower than 2 s is degraded', async () => {
    const org = await mappedOrg();
    await call(srv, 'PUT', '/v1/mcp/config', { key: org.key, body: { baseUrl: `${slowUrl}/mcp`, credentials: bearer } });
    const res = await call(srv, 'POST', '/v1/mcp/test', { key: org.key, body: { channelType: 'RCS' } });
    expect(res.body.data.results[0]).toMatchObject({ channelType: 'RCS', status: 'degraded', latencyMs: expect.any(Number) });
    expect(res.body.data.results[0].latencyMs).toBeGreaterThan(2_000);
    expect(res.body.data.success).toBe(false);
  }, 20_000);
});
