// Every list takes the same paging parameters (issue 37 item 6): `GET /v1/webhook-endpoints?limit=1` answered 400
// "query.limit is not a known field". Each list operation of the document is called through HTTP with `page` and
// `limit`; the lists answered whole by default still answer every item without them (a client that relied on
// that keeps working) and page like every other list with them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOperations, type OpenApiDocument } from '../src/contract/document.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;

beforeAll(async () => {
  srv = await startTestServer({ config: { webhookAllowPrivate: true } });
  org = await srv.newOrg('Paging org');
  key = org.apiKey.secret;
});
afterAll(() => srv.close());

type Page = { page: number; limit: number; total: number; hasMore: boolean };
const get = async (path: string) => {
  const res = await call(srv, 'GET', path, { key });
  return res as typeof res & { body: { data: unknown[]; pagination: Page } };
};

describe('every list takes page and limit', () => {
  it('answers 200 with pagination to page=1&limit=1 on every list operation without path parameters', async () => {
    const lists = listOperations(srv.context.document as unknown as OpenApiDocument).filter(
      (op) => op.method === 'get' && op.operationId.startsWith('list') && !op.path.includes('{'),
    );
    expect(lists.length).toBeGreaterThan(20);
    const refused: string[] = [];
    for (const op of lists) {
      const extra = op.operationId === 'listChatAppTemplates' ? `&senderId=${org.senderId}` : '';
      const res = await get(`${op.path}?page=1&limit=1${extra}`);
      // The sandbox sender is not a chat-app sender: that list answers 400 about senderId, never about paging.
      const namesPaging = JSON.stringify(res.body).match(/query\.(page|limit)/);
      const ok =
        op.operationId === 'listChatAppTemplates'
          ? res.status === 400 && !namesPaging
          : res.status === 200 && res.body.pagination?.limit === 1 && res.body.data.length <= 1;
      if (!ok) refused.push(`${op.operationId}: ${res.status} ${res.text.slice(0, 200)}`);
    }
    expect(refused).toEqual([]);
  });

  it('answers a list that was whole by default whole without page or limit, and pages it with either', async () => {
    for (const n of [1, 2, 3]) {
      const res = await call(srv, 'POST', '/v1/webhook-endpoints', {
        key,
        body: { url: `http://127.0.0.1:9/hooks/${n}`, events: ['message.delivered'] },
      });
      expect(res.status, res.text).toBe(201);
    }
    const whole = await get('/v1/webhook-endpoints');
    expect(whole.status).toBe(200);
    expect(whole.body.data).toHaveLength(3);
    expect(whole.body.pagination).toEqual({ page: 1, limit: 3, total: 3, hasMore: false });

    const first = await get('/v1/webhook-endpoints?limit=1');
    expect(first.status, first.text).toBe(200);
    expect(first.body.pagination).toEqual({ page: 1, limit: 1, total: 3, hasMore: true });
    expect(first.body.data).toEqual([whole.body.data[0]]);

    const last = await get('/v1/webhook-endpoints?page=2&limit=2');
    expect(last.body.pagination).toEqual({ page: 2, limit: 2, total: 3, hasMore: false });
    expect(last.body.data).toEqual([whole.body.data[2]]);

    // `page` alone pages with the default size (20).
    expect((await get('/v1/webhook-endpoints?page=1')).body.pagination).toEqual({ page: 1, limit: 20, total: 3, hasMore: false });
    expect((await get('/v1/webhook-endpoints?page=2')).body.data).toEqual([]);

    // The bounds of every list: limit above 100 or a page of 0 is a 400 naming the parameter.
    const tooMany = await get('/v1/tags?limit=101');
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'query.limit' }] });
    expect((await get('/v1/keyword-rules?page=0')).status).toBe(400);
  });

  it('pages the lists under a path parameter too (a sender’s protocols)', async () => {
    const whole = await get(`/v1/sender-ids/${org.senderId}/protocols`);
    expect(whole.status, whole.text).toBe(200);
    expect(whole.body.pagination).toEqual({
      page: 1,
      limit: Math.max(1, whole.body.data.length),
      total: whole.body.data.length,
      hasMore: false,
    });
    const paged = await get(`/v1/sender-ids/${org.senderId}/protocols?limit=1&page=2`);
    expect(paged.status, paged.text).toBe(200);
    expect(paged.body.pagination).toMatchObject({ page: 2, limit: 1, total: whole.body.data.length });
  });
});
