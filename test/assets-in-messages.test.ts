// Assets as message media (src/domain/assets/media.ts) through HTTP, the real database, the dispatch worker and
// the carrier simulator: content names an asset by `assetId`; the carrier receives a signed link of the right
// variant that downloads the bytes without an API key; tampered and expired links are refused; another
// organization's asset, a type that cannot be sent and an asset not ready are refused naming the field; blasts
// and bots check the assets their content names.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUrl } from '../src/lib/signed-urls.ts';
import type { OutboundMessage } from '../src/providers/provider.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';

let srv: TestServer;
let dir: string;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
let otherKey: string;
let otherOrgId: string;
let seq = 0;
/** Every message the dispatcher handed to the carrier, as the carrier got it. */
const handed: OutboundMessage[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'assets-in-messages-'));
  srv = await startTestServer({ workers: true, config: { storage: { kind: 'fs', dir }, assetBaseUrl: 'https://media.example.test' } });
  org = await srv.newOrg('Media org');
  key = org.apiKey.secret;
  const other = await srv.newOrg('Other media org');
  otherKey = other.apiKey.secret;
  otherOrgId = other.organizationId;
  const provider = srv.providers.sandbox('PROVIDER_A');
  const sendBatch = provider.sendBatch.bind(provider);
  provider.sendBatch = async (messages) => {
    handed.push(...messages);
    return sendBatch(messages);
  };
});
afterAll(async () => {
  await srv.close();
  await rm(dir, { recursive: true, force: true });
});

// ---- helpers --------------------------------------------------------------------------------------------
const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#2266aa' } })
    .png()
    .toBuffer();
const gif = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#aa2266' } })
    .gif()
    .toBuffer();
const VCARD = 'BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada Lovelace\r\nEND:VCARD\r\n';

async function uploadReady(
  data: Buffer | string,
  filename: string,
  k = key,
): Promise<{ id: string; type: string; variants: Array<{ name: string; width: number }> }> {
  const form = new FormData();
  form.append('file', new Blob([data]), filename);
  const res = await call(srv, 'POST', '/v1/assets/upload', { key: k, rawBody: form });
  expect(res.status, res.text).toBe(201);
  const ready = await until(
    async () => (await call(srv, 'GET', `/v1/assets/${res.body.data.id}`, { key: k })).body.data,
    (a) => a.status !== 'processing',
    'asset processing',
  );
  expect(ready.status).toBe('ready');
  return ready;
}

/** A contact whose number ends in `suffix` (0–4: RCS handset; 5–9: SMS/MMS only). */
async function contact(suffix: string, rcsCapable: boolean, orgId = org.organizationId) {
  const phone = `+1415${String(++seq).padStart(7 - suffix.length, '0')}${suffix}`;
  return srv.context.db
    .insertInto('contacts')
    .values({
      organization_id: orgId,
      phone,
      attributes: '{}',
      rcs_capable: rcsCapable,
      consent_type: 'MARKETING',
      time_zone: 'UTC',
      quiet_hours_start: '23:59',
      quiet_hours_end: '00:00',
    })
    .returning(['id', 'phone'])
    .executeTakeFirstOrThrow();
}

const send = (body: Record<string, unknown>, k = key) =>
  call(srv, 'POST', '/v1/messages/send', { key: k, body: { messageType: 'TRANSACTIONAL', ...body } });

/** What the carrier got for the message sent to `phone`. */
const carrierGot = (phone: string) =>
  until(
    async () => handed.find((m) => m.to === phone),
    (m) => m !== undefined,
    `the carrier to get a message for ${phone}`,
  ).then((m) => m!);

/** A link as this test server answers it (the links name ASSET_BASE_URL, the public address). */
const local = (link: string) => {
  const u = new URL(link);
  return `${srv.baseUrl}${u.pathname}${u.search}`;
};

async function fetchBytes(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

const withKey = async (id: string, variant: string) =>
  (await fetchBytes(`${srv.baseUrl}/v1/assets/${id}/variant/${variant}`, { authorization: `Bearer ${key}` })).bytes;

// ---- tests ----------------------------------------------------------------------------------------------
describe('sending an asset by id', () => {
  it('gives a media message the signed link of the mms variant, which downloads without a key', async () => {
    const asset = await uploadReady(await png(1600, 1200), 'hero.png');
    const c = await contact('1', true);
    const res = await send({ contactId: c.id, content: { type: 'media', assetId: asset.id, text: 'Your new look' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ plannedChannel: 'RCS' });

    const got = await carrierGot(c.phone);
    expect(got.channel).toBe('RCS');
    const link = new URL(got.mediaUrl!);
    expect(link.origin).toBe('https://media.example.test');
    expect(link.pathname).toBe(`/v1/assets/${asset.id}/variant/mms`);
    expect(link.searchParams.get('org')).toBe(org.organizationId);
    // 7 days from the start of the hour the message was accepted.
    const expires = Number(link.searchParams.get('expires')) * 1000;
    const hourStart = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    expect([hourStart, hourStart - 3_600_000].map((h) => h + 7 * 24 * 3_600_000)).toContain(expires);

    const fetched = await fetchBytes(local(got.mediaUrl!)); // no Authorization header
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-type')).toBe('image/jpeg');
    expect(fetched.bytes.equals(await withKey(asset.id, 'mms'))).toBe(true);
    expect((await sharp(fetched.bytes).metadata()).width).toBe(1280);
    const cache = fetched.headers.get('cache-control')!;
    expect(cache).toMatch(/^public, max-age=\d+, immutable$/);
    expect(Number(/max-age=(\d+)/.exec(cache)![1])).toBeLessThanOrEqual(7 * 24 * 3600);

    // The stored message says which asset it carried and the link the carrier got.
    const messages = await call(srv, 'GET', `/v1/conversations/${res.body.data.conversationId}/messages`, { key });
    expect(messages.status, messages.text).toBe(200);
    expect(messages.body.data[0].content).toMatchObject({
      type: 'media',
      assetId: asset.id,
      mediaUrl: got.mediaUrl,
      text: 'Your new look',
    });
  });

  it('gives a card the original of a small GIF; an MMS fallback carries the same link', async () => {
    const bytes = await gif(120, 80);
    const asset = await uploadReady(bytes, 'wave.gif');
    expect(asset.type).toBe('gif');
    const c = await contact('7', false);
    const res = await send({ contactId: c.id, content: { type: 'card', title: 'Hello', text: 'A small animation', assetId: asset.id } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ plannedChannel: 'MMS', fallbackUsed: true });
    const got = await carrierGot(c.phone);
    expect(got.channel).toBe('MMS');
    expect(new URL(got.mediaUrl!).pathname).toBe(`/v1/assets/${asset.id}/variant/original`);
    const fetched = await fetchBytes(local(got.mediaUrl!));
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-type')).toBe('image/gif');
    expect(fetched.bytes.equals(bytes)).toBe(true);

    // channelType MMS accepts a card whose media is an asset.
    const mms = await send({ contactId: c.id, channelType: 'MMS', content: { type: 'card', title: 'Again', assetId: asset.id } });
    expect(mms.status, mms.text).toBe(200);
    expect(mms.body.data.plannedChannel).toBe('MMS');
  });

  it('signs every carousel card that names an asset', async () => {
    const a = await uploadReady(await png(300, 200), 'a.png');
    const b = await uploadReady(await png(200, 300), 'b.png');
    const c = await contact('2', true);
    const res = await send({
      contactId: c.id,
      content: {
        type: 'carousel',
        cards: [
          { title: 'A', assetId: a.id },
          { title: 'B', mediaUrl: 'https://cdn.example.com/b.jpg' },
          { title: 'C', assetId: b.id },
        ],
      },
    });
    expect(res.status, res.text).toBe(200);
    const stored = await call(srv, 'GET', `/v1/conversations/${res.body.data.conversationId}/messages`, { key });
    expect(stored.status, stored.text).toBe(200);
    const cards = stored.body.data[0].content.cards as Array<{ assetId?: string; mediaUrl: string }>;
    expect(cards[1]).toEqual({ title: 'B', mediaUrl: 'https://cdn.example.com/b.jpg' });
    for (const [i, asset] of [
      [0, a],
      [2, b],
    ] as const) {
      expect(cards[i]!.assetId).toBe(asset.id);
      const fetched = await fetchBytes(local(cards[i]!.mediaUrl));
      expect(fetched.status).toBe(200);
      expect(fetched.bytes.equals(await withKey(asset.id, 'mms'))).toBe(true);
    }
  });
});

describe('the carrier MMS limit (600 KB) and mmsTranscoding', () => {
  /** Noise does not compress: its `mms` variant (at most 1 MB) stays over the carrier's 600 KB. */
  const noise = (side: number) =>
    sharp(Buffer.from(Array.from({ length: side * side * 3 }, () => Math.floor(Math.random() * 256))), {
      raw: { width: side, height: side, channels: 3 },
    })
      .png()
      .toBuffer();
  const LIMIT = 600 * 1024;
  let asset: { id: string };
  let mmsBytes: Buffer;

  beforeAll(async () => {
    asset = await uploadReady(await noise(1280), 'noise.png');
    mmsBytes = await withKey(asset.id, 'mms');
    expect(mmsBytes.length).toBeGreaterThan(LIMIT);
  });

  it('fails an MMS whose image is over the limit with MEDIA_TOO_LARGE when the sender does not transcode', async () => {
    const disabled = await call(srv, 'POST', `/v1/sender-ids/${org.senderId}/protocols`, {
      key,
      body: { type: 'MMS', config: { mmsTranscoding: false } },
    });
    expect(disabled.status, disabled.text).toBe(200);
    const c = await contact('7', false);
    const res = await send({ contactId: c.id, content: { type: 'media', assetId: asset.id, text: 'Too big' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ plannedChannel: 'MMS' });
    const failed = await until(
      async () => (await call(srv, 'GET', `/v1/messages/${res.body.data.messageId}`, { key })).body.data,
      (m) => m.status === 'failed',
      'the oversize MMS to fail',
    );
    expect(failed.error).toMatchObject({ code: 'MEDIA_TOO_LARGE' });
    expect(failed.error.message).toContain('600 KB');
    expect(handed.some((m) => m.to === c.phone)).toBe(false);
  });

  it('hands the carrier a JPEG transcoded under the limit when mmsTranscoding is on; the asset is unchanged', async () => {
    const enabled = await call(srv, 'PATCH', `/v1/sender-ids/${org.senderId}/protocols/MMS`, {
      key,
      body: { config: { mmsTranscoding: true } },
    });
    expect(enabled.status, enabled.text).toBe(200);
    const c = await contact('8', false);
    const res = await send({ contactId: c.id, content: { type: 'media', assetId: asset.id, text: 'Fits now' } });
    expect(res.status, res.text).toBe(200);

    const got = await carrierGot(c.phone);
    expect(got.channel).toBe('MMS');
    expect(new URL(got.mediaUrl!).pathname).toBe(`/v1/assets/${asset.id}/variant/mms_carrier`);
    const fetched = await fetchBytes(local(got.mediaUrl!)); // as the carrier fetches it: no key
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-type')).toBe('image/jpeg');
    expect(fetched.bytes.length).toBeLessThanOrEqual(LIMIT);
    expect((await sharp(fetched.bytes).metadata()).format).toBe('jpeg');
    // Stored variants are untouched: the mms variant still has its bytes, and no variant was added.
    expect((await withKey(asset.id, 'mms')).equals(mmsBytes)).toBe(true);
    const after = await call(srv, 'GET', `/v1/assets/${asset.id}`, { key });
    expect(after.body.data.variants.map((v: { name: string }) => v.name)).not.toContain('mms_carrier');
  });
});

describe('previewMessage', () => {
  it('previews an asset as the send would: the signed link on RCS and on the MMS fallback; 404 for an unknown one', async () => {
    const asset = await uploadReady(await png(400, 300), 'preview.png');
    const res = await call(srv, 'POST', '/v1/messages/preview', {
      key,
      body: { content: { type: 'card', title: 'Look', assetId: asset.id } },
    });
    expect(res.status, res.text).toBe(200);
    const renderings = res.body.data.renderings as Array<{ channel: string; mediaUrl: string | null }>;
    expect(renderings.map((r) => r.channel)).toEqual(['RCS', 'MMS']);
    for (const r of renderings) expect(new URL(r.mediaUrl!).pathname).toBe(`/v1/assets/${asset.id}/variant/mms`);
    const unknown = await call(srv, 'POST', '/v1/messages/preview', {
      key: otherKey,
      body: { content: { type: 'media', assetId: asset.id } },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.details).toEqual([expect.objectContaining({ field: 'body.content.assetId' })]);
  });
});

describe('signed links', () => {
  let link: string;
  let assetId: string;
  beforeAll(async () => {
    const asset = await uploadReady(await png(64, 64), 'small.png');
    assetId = asset.id;
    const c = await contact('3', true);
    const res = await send({ contactId: c.id, content: { type: 'media', assetId } });
    expect(res.status, res.text).toBe(200);
    link = local((await carrierGot(c.phone)).mediaUrl!);
  });

  it('refuses an altered link with 403 INVALID_SIGNATURE', async () => {
    const u = new URL(link);
    const signature = u.searchParams.get('signature')!;
    const altered = [
      (() => {
        const x = new URL(link);
        x.searchParams.set('signature', (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1));
        return x;
      })(),
      (() => {
        const x = new URL(link);
        x.pathname = x.pathname.replace('/variant/mms', '/variant/original');
        return x;
      })(),
      (() => {
        const x = new URL(link);
        x.searchParams.set('expires', String(Number(x.searchParams.get('expires')) + 3600));
        return x;
      })(),
      (() => {
        const x = new URL(link);
        x.searchParams.delete('org');
        return x;
      })(),
    ];
    for (const x of altered) {
      const res = await fetch(x);
      expect(res.status, x.href).toBe(403);
      expect(((await res.json()) as { code: string }).code).toBe('INVALID_SIGNATURE');
    }
  });

  it('answers an expired link 404 LINK_EXPIRED, and a link of another organization 404 NOT_FOUND', async () => {
    const path = `/v1/assets/${assetId}/variant/mms`;
    const expired = await fetch(signUrl(srv.baseUrl, path, org.organizationId, new Date(Date.now() - 60_000)));
    expect(expired.status).toBe(404);
    expect(((await expired.json()) as { code: string }).code).toBe('LINK_EXPIRED');
    // An authentic link, made for another organization: the asset is not theirs.
    const foreign = await fetch(signUrl(srv.baseUrl, path, otherOrgId, new Date(Date.now() + 60_000)));
    expect(foreign.status).toBe(404);
    expect(((await foreign.json()) as { code: string }).code).toBe('NOT_FOUND');
  });

  it('answers If-None-Match with 304 through a link too', async () => {
    const first = await fetch(link);
    const etag = first.headers.get('etag')!;
    await first.arrayBuffer();
    const again = await fetch(link, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('cache-control')).toMatch(/^public, /);
  });
});

describe('refusals', () => {
  it("answers another organization's asset with 404 naming the field", async () => {
    const foreign = await uploadReady(await png(40, 40), 'theirs.png', otherKey);
    const mine = await uploadReady(await png(40, 40), 'mine.png');
    const c = await contact('4', true);
    const media = await send({ contactId: c.id, content: { type: 'media', assetId: foreign.id } });
    expect(media.status).toBe(404);
    expect(media.body).toMatchObject({ code: 'NOT_FOUND', details: [{ field: 'body.content.assetId' }] });
    const carousel = await send({
      contactId: c.id,
      content: {
        type: 'carousel',
        cards: [
          { title: 'Mine', assetId: mine.id },
          { title: 'Theirs', assetId: foreign.id },
        ],
      },
    });
    expect(carousel.status).toBe(404);
    expect(carousel.body.details).toEqual([expect.objectContaining({ field: 'body.content.cards.1.assetId' })]);
    const none = await srv.context.db.selectFrom('messages').select('id').where('contact_id', '=', c.id).execute();
    expect(none).toEqual([]);
  });

  it('refuses an asset that is not an image, GIF or MP4 video with 400 naming the field', async () => {
    const card = await uploadReady(VCARD, 'ada.vcf');
    expect(card.type).toBe('vcard');
    const c = await contact('0', true);
    const res = await send({ contactId: c.id, content: { type: 'card', title: 'Contact card', assetId: card.id } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body.content.assetId' }] });
    expect(res.body.details[0].message).toMatch(/vcard/);
  });

  it('refuses an asset still processing or failed with 409 INVALID_STATE', async () => {
    const asset = await uploadReady(await png(30, 30), 'later.png');
    const c = await contact('1', true);
    for (const status of ['processing', 'error'] as const) {
      await srv.context.db
        .updateTable('assets')
        .set({ status, error: status === 'error' ? 'broken' : null })
        .where('id', '=', asset.id)
        .execute();
      const res = await send({ contactId: c.id, content: { type: 'media', assetId: asset.id } });
      expect(res.status, status).toBe(409);
      expect(res.body).toMatchObject({ code: 'INVALID_STATE', details: [{ field: 'body.content.assetId', code: status }] });
    }
  });

  it('needs exactly one of mediaUrl and assetId on media, at most one on a card', async () => {
    const asset = await uploadReady(await png(20, 20), 'one.png');
    const c = await contact('2', true);
    const both = await send({ contactId: c.id, content: { type: 'media', assetId: asset.id, mediaUrl: 'https://cdn.example.com/x.jpg' } });
    expect(both.status).toBe(400);
    expect(both.body.code).toBe('VALIDATION_ERROR');
    const neither = await send({ contactId: c.id, content: { type: 'media', text: 'nothing to show' } });
    expect(neither.status).toBe(400);
    expect(neither.body.details.map((d: { field: string }) => d.field)).toContain('body.content.mediaUrl');
    const card = await send({
      contactId: c.id,
      content: { type: 'card', title: 'x', assetId: asset.id, mediaUrl: 'https://cdn.example.com/x.jpg' },
    });
    expect(card.status).toBe(400);
    const notUuid = await send({ contactId: c.id, content: { type: 'media', assetId: 'hero.png' } });
    expect(notUuid.status).toBe(400);
  });
});

describe('blasts and bots', () => {
  it('checks the assets of a blast content at create and at content update', async () => {
    const ok = await uploadReady(await png(50, 50), 'blast.png');
    const pdfLike = await uploadReady(VCARD, 'card.vcf');
    const foreign = await uploadReady(await png(50, 50), 'foreign.png', otherKey);
    const c = await contact('3', true);
    const create = (content: Record<string, unknown>) =>
      call(srv, 'POST', '/v1/blasts', {
        key,
        body: { name: 'Media blast', senderId: org.senderId, contactIds: [c.id], contentJson: content },
      });

    const unknown = await create({ type: 'card', card: { title: 'Sale', assetId: foreign.id } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.details).toEqual([expect.objectContaining({ field: 'body.contentJson.card.assetId' })]);
    const wrongType = await create({ type: 'media', assetId: pdfLike.id });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.details).toEqual([expect.objectContaining({ field: 'body.contentJson.assetId' })]);

    const created = await create({ type: 'media', assetId: ok.id, text: 'Sale!' });
    expect(created.status, created.text).toBe(201);
    expect(created.body.contentJson).toMatchObject({ type: 'media', assetId: ok.id });

    const variants = await call(srv, 'PUT', `/v1/blasts/${created.body.id}/content`, {
      key,
      body: {
        variants: [
          { key: 'A', weight: 50, content: { type: 'media', assetId: ok.id } },
          {
            key: 'B',
            weight: 50,
            content: {
              type: 'carousel',
              cards: [
                { title: 'x', assetId: ok.id },
                { title: 'y', assetId: foreign.id },
              ],
            },
          },
        ],
      },
    });
    expect(variants.status).toBe(404);
    expect(variants.body.details).toEqual([expect.objectContaining({ field: 'body.variants.1.content.cards.1.assetId' })]);
  });

  it("reports a bot node's unknown or unsendable asset in publish validation", async () => {
    const card = await uploadReady(VCARD, 'bot.vcf');
    const foreign = await uploadReady(await png(10, 10), 'bot-foreign.png', otherKey);
    const good = await uploadReady(await png(10, 10), 'bot.png');
    const flow = (assetIds: string[]) => ({
      nodes: [
        { id: 'start', type: 'START' },
        ...assetIds.map((assetId, i) => ({ id: `m${i}`, type: 'MESSAGE', content: { type: 'media', assetId } })),
        { id: 'end', type: 'END' },
      ],
      edges: [
        ...assetIds.map((_, i) => ({ id: `e${i}`, source: i === 0 ? 'start' : `m${i - 1}`, target: `m${i}` })),
        { id: 'last', source: `m${assetIds.length - 1}`, target: 'end' },
      ],
    });
    const created = await call(srv, 'POST', '/v1/bots', {
      key,
      body: { name: 'Media bot', channel: 'RCS', draftFlow: flow([foreign.id, card.id, good.id]) },
    });
    expect(created.status, created.text).toBe(201);
    const v = await call(srv, 'POST', `/v1/bots/${created.body.id}/validate`, { key });
    expect(v.status).toBe(200);
    expect(v.body.data.errors).toEqual([
      expect.objectContaining({ code: 'UNKNOWN_ASSET', nodeId: 'm0' }),
      expect.objectContaining({ code: 'ASSET_NOT_SENDABLE', nodeId: 'm1' }),
    ]);
    const fixed = await call(srv, 'PUT', `/v1/bots/${created.body.id}`, { key, body: { draftFlow: flow([good.id]) } });
    expect(fixed.status, fixed.text).toBe(200);
    expect((await call(srv, 'POST', `/v1/bots/${created.body.id}/validate`, { key })).body.data).toMatchObject({ valid: true, errors: [] });
  });
});
