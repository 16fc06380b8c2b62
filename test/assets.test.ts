// Assets through HTTP against the real database: uploads (single and batch) with the type taken from the
// bytes, processing by the background job (variants, errors), variant downloads (streamed, signed links without a
// key, ETag/304, caching), crop and resize (dimensions read back from the bytes with sharp), every list filter and
// sort, rename/move, delete, every refused input, tenant walls and scopes; on the filesystem store and on an
// S3-compatible store (s3rver).
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
// @ts-expect-error s3rver ships no type declarations (S3rverLike below is what this file uses)
import S3rverUntyped from 's3rver';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { S3Store } from '../src/lib/storage/index.ts';
import { readAll } from '../src/lib/storage/types.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

type S3rverLike = { run(): Promise<{ port: number }>; close(): Promise<void> };
const S3rver = S3rverUntyped as new (opts: Record<string, unknown>) => S3rverLike;

let srv: TestServer;
let dir: string;
let key: string;
let otherKey: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'assets-test-'));
  srv = await startTestServer({ workers: true, config: { storage: { kind: 'fs', dir }, assetBaseUrl: 'https://media.example.test' } });
  key = (await srv.newOrg('Assets org')).apiKey.secret;
  otherKey = (await srv.newOrg('Other assets org')).apiKey.secret;
});
afterAll(async () => {
  await srv.close();
  await rm(dir, { recursive: true, force: true });
});

// ---- fixtures -------------------------------------------------------------------------------------------
const png = (width: number, height: number, color = '#3366cc') =>
  sharp({ create: { width, height, channels: 4, background: color } })
    .png()
    .toBuffer();
const jpeg = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#cc6633' } })
    .jpeg()
    .toBuffer();

/** A 3-frame animated GIF, 40×30 per frame. */
function animatedGif(): Promise<Buffer> {
  const raw = Buffer.alloc(40 * 90 * 4);
  for (let i = 0; i < raw.length; i += 4) {
    const frame = Math.floor(i / (40 * 30 * 4));
    raw[i] = frame === 0 ? 255 : 0;
    raw[i + 1] = frame === 1 ? 255 : 0;
    raw[i + 2] = frame === 2 ? 255 : 0;
    raw[i + 3] = 255;
  }
  return sharp(raw, { raw: { width: 40, height: 90, channels: 4, pageHeight: 30 } })
    .gif()
    .toBuffer();
}

/** A JPEG that declares 400×400 but is cut short: its header reads, its pixels do not decode. */
async function truncatedJpeg(): Promise<Buffer> {
  const noise = Buffer.alloc(400 * 400 * 3);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 7919) % 251;
  const full = await sharp(noise, { raw: { width: 400, height: 400, channels: 3 } })
    .jpeg()
    .toBuffer();
  return full.subarray(0, Math.floor(full.length * 0.6));
}

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body) >>> 0);
  return Buffer.concat([len, body, crc]);
}
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A tiny PNG whose header declares width×height (a decompression bomb's header). */
function pngHeaderOnly(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  return Buffer.concat([
    PNG_SIGNATURE,
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', Buffer.from([0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

// ---- HTTP helpers ---------------------------------------------------------------------------------------
type Part = { data: Buffer | string; filename: string; type?: string };

function form(field: string, parts: Part[], fields: Record<string, string> = {}): FormData {
  const f = new FormData();
  for (const p of parts) f.append(field, new Blob([p.data], { type: p.type ?? 'application/octet-stream' }), p.filename);
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  return f;
}

const upload = (k: string, part: Part, fields: Record<string, string> = {}, s: TestServer = srv) =>
  call(s, 'POST', '/v1/assets/upload', { key: k, rawBody: form('file', [part], fields) });
const batch = (k: string, parts: Part[], fields: Record<string, string> = {}) =>
  call(srv, 'POST', '/v1/assets/upload/batch', { key: k, rawBody: form('files', parts, fields) });

async function uploaded(k: string, part: Part, fields: Record<string, string> = {}, s: TestServer = srv) {
  const res = await upload(k, part, fields, s);
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

/** Polls the asset until its job has run. */
async function settled(k: string, id: string, s: TestServer = srv) {
  for (let i = 0; i < 200; i++) {
    const res = await call(s, 'GET', `/v1/assets/${id}`, { key: k });
    expect(res.status, res.text).toBe(200);
    if (res.body.data.status !== 'processing') return res.body.data;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`asset ${id} still processing`);
}

async function download(k: string, id: string, variant: string, headers: Record<string, string> = {}, s: TestServer = srv) {
  const res = await fetch(`${s.baseUrl}/v1/assets/${id}/variant/${variant}`, { headers: { authorization: `Bearer ${k}`, ...headers } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** A signed link to `variant` of the asset, expiring at `urlsExpireAt`: 24 hours after the start of this hour. */
function expectSignedLink(url: string, id: string, variant: string, urlsExpireAt: string) {
  const link = new URL(url);
  expect(`${link.origin}${link.pathname}`).toBe(`https://media.example.test/v1/assets/${id}/variant/${variant}`);
  expect(link.searchParams.get('signature')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  const expires = Number(link.searchParams.get('expires')) * 1000;
  expect(new Date(expires).toISOString()).toBe(urlsExpireAt);
  const hourStart = Math.floor(Date.now() / 3_600_000) * 3_600_000;
  expect([hourStart, hourStart - 3_600_000].map((h) => h + 24 * 3_600_000)).toContain(expires);
}

/** The link as this test server answers it (links name ASSET_BASE_URL, the public address). */
const local = (url: string, s: TestServer = srv) => {
  const link = new URL(url);
  return `${s.baseUrl}${link.pathname}${link.search}`;
};

/** An MP4 of `size` bytes (an `ftyp` box, then noise): a video asset, served as uploaded. */
function mp4(size: number): Buffer {
  const data = randomBytes(size);
  Buffer.from([0, 0, 0, 0x18]).copy(data, 0);
  Buffer.from('ftypisom\0\0\x02\0isommp41', 'latin1').copy(data, 4);
  return data;
}
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function dimensions(bytes: Buffer) {
  const m = await sharp(bytes).metadata();
  return { width: m.width, height: m.pageHeight ?? m.height, format: m.format, pages: m.pages ?? 1 };
}

// ---- tests ----------------------------------------------------------------------------------------------
describe('uploadAsset and processing', () => {
  it('detects the type from the bytes, answers processing, then makes thumbnail and mms variants', async () => {
    const bytes = await png(640, 480);
    // The client lies about the Content-Type and the extension: the bytes decide.
    const asset = await uploaded(key, { data: bytes, filename: 'hero.txt', type: 'text/plain' });
    expect(asset).toMatchObject({
      type: 'image',
      mimeType: 'image/png',
      name: 'hero.txt',
      width: 640,
      height: 480,
      size_bytes: bytes.length,
      folderId: null,
      error: null,
    });
    expect(['processing', 'ready']).toContain(asset.status);
    expectSignedLink(asset.url, asset.id, 'original', asset.urlsExpireAt);

    const ready = await settled(key, asset.id);
    expect(ready.status).toBe('ready');
    const byName = Object.fromEntries(ready.variants.map((v: { name: string }) => [v.name, v]));
    expect(byName.thumbnail).toMatchObject({ mimeType: 'image/jpeg', width: 320, height: 240 });
    expectSignedLink(byName.thumbnail.url, asset.id, 'thumbnail', ready.urlsExpireAt);
    expect(byName.mms).toMatchObject({ mimeType: 'image/jpeg', width: 640, height: 480 });

    const thumb = await download(key, asset.id, 'thumbnail');
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toBe('image/jpeg');
    expect(thumb.headers.get('cache-control')).toContain('max-age=');
    const etag = thumb.headers.get('etag');
    expect(etag).toMatch(/^"[0-9a-f]+"$/);
    expect(await dimensions(thumb.bytes)).toMatchObject({ width: 320, height: 240, format: 'jpeg' });
    expect((await download(key, asset.id, 'thumbnail', { 'if-none-match': etag!, 'cache-control': 'max-age=0' })).status).toBe(304);

    const mms = await download(key, asset.id, 'mms');
    expect(mms.bytes.length).toBeLessThanOrEqual(1024 * 1024);

    const original = await download(key, asset.id, 'original');
    expect(original.headers.get('content-type')).toBe('image/png');
    expect(original.headers.get('content-length')).toBe(String(bytes.length));
    expect(original.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
    expect(original.bytes.equals(bytes)).toBe(true);

    // The asset's links download without a key; caches may share them until the link expires.
    const viaLink = await fetch(local(ready.url));
    expect(viaLink.status).toBe(200);
    expect(Buffer.from(await viaLink.arrayBuffer()).equals(bytes)).toBe(true);
    const cache = viaLink.headers.get('cache-control')!;
    expect(cache).toMatch(/^public, max-age=\d+, immutable$/);
    expect(Number(/max-age=(\d+)/.exec(cache)![1])).toBeLessThanOrEqual((new Date(ready.urlsExpireAt).getTime() - Date.now()) / 1000 + 1);
    const thumbLink = await fetch(local(byName.thumbnail.url));
    expect(Buffer.from(await thumbLink.arrayBuffer()).equals(thumb.bytes)).toBe(true);
    const tampered = new URL(local(byName.thumbnail.url));
    tampered.pathname = tampered.pathname.replace('/thumbnail', '/original');
    expect((await fetch(tampered)).status).toBe(403);
    const noKey = await fetch(`${srv.baseUrl}/v1/assets/${asset.id}/variant/original`);
    expect(noKey.status).toBe(401);

    const unknown = await call(srv, 'GET', `/v1/assets/${asset.id}/variant/poster`, { key });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('NOT_FOUND');
  });

  it('stores text, vCard, PDF-less other types without variants; non-visual types download as attachments', async () => {
    const vcard = await uploaded(key, {
      data: 'BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada Lovelace\r\nEND:VCARD\r\n',
      filename: 'ada.vcf',
      type: 'image/png',
    });
    expect(vcard).toMatchObject({ type: 'vcard', mimeType: 'text/vcard', width: null, height: null });
    expect((await settled(key, vcard.id)).variants).toEqual([]);
    const file = await download(key, vcard.id, 'original');
    expect(file.headers.get('content-type')).toBe('application/octet-stream');
    expect(file.headers.get('content-disposition')).toMatch(/^attachment; filename="ada.vcf"/);

    const text = await uploaded(key, { data: 'just some notes\n', filename: 'notes.txt' });
    expect(text).toMatchObject({ type: 'other', mimeType: 'text/plain' });
  });

  it('records a processing failure, hides it from the list unless includeErrors=true', async () => {
    const broken = await uploaded(key, { data: await truncatedJpeg(), filename: 'broken-listing-test.jpg' });
    expect(broken).toMatchObject({ type: 'image', width: 400, height: 400 });
    const done = await settled(key, broken.id);
    expect(done.status).toBe('error');
    expect(done.error).toMatch(/cannot be decoded/);
    expect(done.variants).toEqual([]);

    const hidden = await call(srv, 'GET', '/v1/assets?search=broken-listing-test&limit=100', { key });
    expect(hidden.body.data).toEqual([]);
    const shown = await call(srv, 'GET', '/v1/assets?search=broken-listing-test&includeErrors=true', { key });
    expect(shown.body.data.map((a: { id: string }) => a.id)).toEqual([broken.id]);
    expect(shown.body.data[0].error).toBe(done.error);

    // crop and resize need a ready source
    const crop = await call(srv, 'POST', `/v1/assets/${broken.id}/crop`, { key, body: { x: 0, y: 0, width: 10, height: 10 } });
    expect(crop.status).toBe(409);
    expect(crop.body.code).toBe('INVALID_STATE');
  });

  it('neutralises paths in file names and in the name part', async () => {
    const a = await uploaded(key, { data: await png(10, 10), filename: ['..', '..', 'etc', 'passwd.png'].join('/') });
    expect(a.name).toBe('passwd.png');
    const b = await uploaded(key, { data: await png(10, 10), filename: 'x.png' }, { name: '..\\..\\windows\\system32\\evil.png' });
    expect(b.name).toBe('evil.png');
    const c = await uploaded(key, { data: await png(10, 10), filename: '..' });
    expect(c.name).toBe('file');
    // Their variants are written by the job: let it finish, so the next test counts a quiet directory.
    for (const x of [a, b, c]) await settled(key, x.id);
  });

  it('refuses bad files clearly and stores nothing', async () => {
    const before = (await readdir(dir, { recursive: true })).length;

    const empty = await upload(key, { data: Buffer.alloc(0), filename: 'empty.png' });
    expect(empty.status).toBe(400);
    expect(empty.body.details[0]).toMatchObject({ field: 'body.file' });
    expect(empty.body.message + empty.body.details[0].message).toMatch(/empty/);

    const fakePng = await upload(key, {
      data: Buffer.concat([PNG_SIGNATURE, Buffer.from('this is really a text file, not an image at all\n'.repeat(4))]),
      filename: 'fake.png',
      type: 'image/png',
    });
    expect(fakePng.status).toBe(400);
    expect(fakePng.body.details[0].field).toBe('body.file');
    expect(fakePng.body.message).toMatch(/image\/png/);

    const bomb = await upload(key, { data: pngHeaderOnly(30_000, 30_000), filename: 'bomb.png' });
    expect(bomb.status).toBe(400);
    expect(bomb.body.message).toMatch(/pixels/);

    const zip = await upload(key, { data: Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(200, 1)]), filename: 'a.zip' });
    expect(zip.status).toBe(415);
    expect(zip.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');

    const binary = await upload(key, { data: Buffer.from([0, 1, 2, 3, 4, 5, 0, 0, 9]), filename: 'blob.bin' });
    expect(binary.status).toBe(415);

    const big = await upload(key, { data: Buffer.concat([await png(10, 10), Buffer.alloc(5 * 1024 * 1024)]), filename: 'big.png' });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe('PAYLOAD_TOO_LARGE');

    const notMultipart = await call(srv, 'POST', '/v1/assets/upload', { key, body: { file: 'x' } });
    expect(notMultipart.status).toBe(415);

    const noFile = await call(srv, 'POST', '/v1/assets/upload', {
      key,
      rawBody: (() => {
        const f = new FormData();
        f.append('name', 'x');
        return f;
      })(),
    });
    expect(noFile.status).toBe(400);

    const unknownFolder = await upload(
      key,
      { data: await png(10, 10), filename: 'a.png' },
      { folderId: '6f5e4d3c-2b1a-4f9e-8d7c-6b5a4f3e2d1c' },
    );
    expect(unknownFolder.status).toBe(404);
    expect(unknownFolder.body.details[0].field).toBe('body.folderId');

    expect((await readdir(dir, { recursive: true })).length).toBe(before);
  });
});

describe('uploadAssetBatch', () => {
  it('judges each file on its own', async () => {
    const res = await batch(key, [
      { data: await png(50, 40), filename: 'one.png' },
      { data: Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(100, 1)]), filename: 'catalog.zip' },
      { data: Buffer.alloc(0), filename: 'empty.jpg' },
      { data: await jpeg(30, 20), filename: '../two.jpg' },
    ]);
    expect(res.status, res.text).toBe(201);
    expect(res.body.summary).toEqual({ total: 4, created: 2, failed: 2 });
    expect(res.body.data.map((r: { status: string }) => r.status)).toEqual(['created', 'failed', 'failed', 'created']);
    expect(res.body.data[0].asset).toMatchObject({ name: 'one.png', width: 50, height: 40 });
    expect(res.body.data[1]).toMatchObject({ index: 1, filename: 'catalog.zip', asset: null, error: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
    expect(res.body.data[2].error.code).toBe('VALIDATION_ERROR');
    expect(res.body.data[3].asset.name).toBe('two.jpg');
    expect((await settled(key, res.body.data[3].asset.id)).status).toBe('ready');
  });

  it('accepts a batch of one, files every file in folderId, and refuses a bad request whole', async () => {
    const folder = (await call(srv, 'POST', '/v1/asset-folders', { key, body: { name: 'Batch folder' } })).body.data;
    const one = await batch(key, [{ data: await png(5, 5), filename: 'solo.png' }], { folderId: folder.id });
    expect(one.status, one.text).toBe(201);
    expect(one.body.data[0].asset.folderId).toBe(folder.id);

    const unknown = await batch(key, [{ data: await png(5, 5), filename: 'solo.png' }], {
      folderId: '6f5e4d3c-2b1a-4f9e-8d7c-6b5a4f3e2d1c',
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.details[0].field).toBe('body.folderId');

    const none = await call(srv, 'POST', '/v1/assets/upload/batch', {
      key,
      rawBody: (() => {
        const f = new FormData();
        f.append('folderId', folder.id);
        return f;
      })(),
    });
    expect(none.status).toBe(400);

    const small = await png(2, 2);
    const tooMany = await batch(
      key,
      Array.from({ length: 21 }, (_, i) => ({ data: small, filename: `f${i}.png` })),
    );
    expect(tooMany.status).toBe(400);
  });
});

describe('cropAsset and resizeAsset', () => {
  it('crops into a new asset of the requested size, keeping the format and the folder', async () => {
    const folder = (await call(srv, 'POST', '/v1/asset-folders', { key, body: { name: 'Crops' } })).body.data;
    const src = await uploaded(key, { data: await png(640, 480), filename: 'spring-hero.png' }, { folderId: folder.id });
    await settled(key, src.id);
    const res = await call(srv, 'POST', `/v1/assets/${src.id}/crop`, { key, body: { x: 100, y: 80, width: 200, height: 150 } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({
      name: 'spring-hero (cropped).png',
      type: 'image',
      mimeType: 'image/png',
      width: 200,
      height: 150,
      folderId: folder.id,
    });
    expect(res.body.data.id).not.toBe(src.id);
    await settled(key, res.body.data.id);
    expect(await dimensions((await download(key, res.body.data.id, 'original')).bytes)).toMatchObject({
      width: 200,
      height: 150,
      format: 'png',
    });

    // the whole image is a valid rectangle; one pixel more is not
    expect((await call(srv, 'POST', `/v1/assets/${src.id}/crop`, { key, body: { x: 0, y: 0, width: 640, height: 480 } })).status).toBe(201);
    const outside = await call(srv, 'POST', `/v1/assets/${src.id}/crop`, { key, body: { x: 600, y: 0, width: 41, height: 10 } });
    expect(outside.status).toBe(400);
    expect(outside.body.details[0].field).toBe('body.width');
    const below = await call(srv, 'POST', `/v1/assets/${src.id}/crop`, { key, body: { x: 0, y: 470, width: 10, height: 11 } });
    expect(below.status).toBe(400);
    expect(below.body.details[0].field).toBe('body.height');
    expect((await call(srv, 'POST', `/v1/assets/${src.id}/crop`, { key, body: { x: -1, y: 0, width: 10, height: 10 } })).status).toBe(400);
  });

  it('crops every frame of an animated GIF', async () => {
    const gif = await uploaded(key, { data: await animatedGif(), filename: 'spinner.gif' });
    expect(gif).toMatchObject({ type: 'gif', width: 40, height: 30 });
    await settled(key, gif.id);
    const res = await call(srv, 'POST', `/v1/assets/${gif.id}/crop`, { key, body: { x: 5, y: 5, width: 20, height: 10 } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({ type: 'gif', mimeType: 'image/gif', width: 20, height: 10 });
    expect(await dimensions((await download(key, res.body.data.id, 'original')).bytes)).toEqual({
      width: 20,
      height: 10,
      format: 'gif',
      pages: 3,
    });
  });

  it('resizes into a new JPEG per fit', async () => {
    const src = await uploaded(key, { data: await png(640, 480), filename: 'banner.png' });
    await settled(key, src.id);
    const cases: Array<[object, number, number]> = [
      [{ width: 200, height: 100, fit: 'cover' }, 200, 100],
      [{ width: 300, height: 300, fit: 'contain' }, 300, 300],
      [{ width: 200, height: 200 }, 200, 150], // inside (default)
      [{ width: 1280, height: 960, fit: 'inside' }, 1280, 960], // upscaling
    ];
    for (const [body, width, height] of cases) {
      const res = await call(srv, 'POST', `/v1/assets/${src.id}/resize`, { key, body });
      expect(res.status, res.text).toBe(201);
      expect(res.body.data).toMatchObject({ type: 'image', mimeType: 'image/jpeg', width, height });
      expect(res.body.data.name).toBe(`banner (${(body as { width: number }).width}x${(body as { height: number }).height}).jpg`);
      expect(await dimensions((await download(key, res.body.data.id, 'original')).bytes)).toMatchObject({ width, height, format: 'jpeg' });
    }
    expect((await call(srv, 'POST', `/v1/assets/${src.id}/resize`, { key, body: { width: 4097, height: 10 } })).status).toBe(400);
    expect((await call(srv, 'POST', `/v1/assets/${src.id}/resize`, { key, body: { width: 10, height: 10, fit: 'fill' } })).status).toBe(
      400,
    );
  });

  it('resizes a GIF to a still JPEG and refuses other types with 422', async () => {
    const gif = await uploaded(key, { data: await animatedGif(), filename: 'anim.gif' });
    await settled(key, gif.id);
    const res = await call(srv, 'POST', `/v1/assets/${gif.id}/resize`, { key, body: { width: 80, height: 60, fit: 'cover' } });
    expect(res.status, res.text).toBe(201);
    expect(await dimensions((await download(key, res.body.data.id, 'original')).bytes)).toEqual({
      width: 80,
      height: 60,
      format: 'jpeg',
      pages: 1,
    });

    const text = await uploaded(key, { data: 'hello', filename: 'hello.txt' });
    await settled(key, text.id);
    for (const [op, body] of [
      ['crop', { x: 0, y: 0, width: 1, height: 1 }],
      ['resize', { width: 10, height: 10 }],
    ] as const) {
      const r = await call(srv, 'POST', `/v1/assets/${text.id}/${op}`, { key, body });
      expect(r.status).toBe(422);
      expect(r.body.code).toBe('UNPROCESSABLE');
    }
  });
});

describe('listAssets, updateAsset, deleteAsset', () => {
  it('filters by folder (id or null), type and search; sorts by name, size and date both ways', async () => {
    const org = await srv.newOrg('Listing org');
    const k = org.apiKey.secret;
    const folder = (await call(srv, 'POST', '/v1/asset-folders', { key: k, body: { name: 'F' } })).body.data;
    const a = await uploaded(k, { data: await png(30, 30), filename: 'Bravo.png' }, { folderId: folder.id });
    const b = await uploaded(k, { data: await png(300, 300), filename: 'alpha_100%.png' });
    const c = await uploaded(k, { data: 'notes', filename: 'charlie.txt' });
    await Promise.all([a, b, c].map((x) => settled(k, x.id)));
    const ids = async (qs: string) => {
      const res = await call(srv, 'GET', `/v1/assets?${qs}`, { key: k });
      expect(res.status, res.text).toBe(200);
      return res.body.data.map((x: { id: string }) => x.id);
    };
    expect(await ids('')).toEqual([c.id, b.id, a.id]);
    expect(await ids('sort=created_at&order=asc')).toEqual([a.id, b.id, c.id]);
    expect(await ids(`folderId=${folder.id}`)).toEqual([a.id]);
    expect(await ids('folderId=null')).toEqual([c.id, b.id]);
    expect(await ids('type=image')).toEqual([b.id, a.id]);
    expect(await ids('type=other')).toEqual([c.id]);
    expect(await ids('search=ALPHA')).toEqual([b.id]);
    expect(await ids('search=100%25')).toEqual([b.id]);
    expect(await ids('search=_1')).toEqual([b.id]);
    expect(await ids('search=zzz')).toEqual([]);
    expect(await ids('sort=name&order=asc')).toEqual([b.id, a.id, c.id]);
    expect(await ids('sort=name&order=desc')).toEqual([c.id, a.id, b.id]);
    const sizes = [a, b, c].sort((x, y) => x.size_bytes - y.size_bytes).map((x) => x.id);
    expect(await ids('sort=size_bytes&order=asc')).toEqual(sizes);
    expect(await ids('sort=size_bytes&order=desc')).toEqual([...sizes].reverse());
    const page = await call(srv, 'GET', '/v1/assets?limit=2&page=2', { key: k });
    expect(page.body.pagination).toMatchObject({ page: 2, limit: 2, total: 3, hasMore: false });
    expect(page.body.data.map((x: { id: string }) => x.id)).toEqual([a.id]);
    expect((await call(srv, 'GET', '/v1/assets?sort=type', { key: k })).status).toBe(400);
    expect((await call(srv, 'GET', '/v1/assets?folderId=nope', { key: k })).status).toBe(400);
    expect(await ids('folderId=6f5e4d3c-2b1a-4f9e-8d7c-6b5a4f3e2d1c')).toEqual([]);
  });

  it('renames and moves an asset; unknown folders answer 404 naming body.folderId', async () => {
    const folder = (await call(srv, 'POST', '/v1/asset-folders', { key, body: { name: 'Moves' } })).body.data;
    const a = await uploaded(key, { data: await png(8, 8), filename: 'old.png' });
    const moved = await call(srv, 'PATCH', `/v1/assets/${a.id}`, { key, body: { name: 'new/../new.png', folderId: folder.id } });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.data).toMatchObject({ name: 'new.png', folderId: folder.id });
    const unfiled = await call(srv, 'PATCH', `/v1/assets/${a.id}`, { key, body: { folderId: null } });
    expect(unfiled.body.data).toMatchObject({ name: 'new.png', folderId: null });
    const unknown = await call(srv, 'PATCH', `/v1/assets/${a.id}`, { key, body: { folderId: '6f5e4d3c-2b1a-4f9e-8d7c-6b5a4f3e2d1c' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.details).toEqual([expect.objectContaining({ field: 'body.folderId' })]);
    expect((await call(srv, 'PATCH', `/v1/assets/${a.id}`, { key, body: {} })).status).toBe(400);
  });

  it('deletes the asset, its file and its variants', async () => {
    const a = await uploaded(key, { data: await png(100, 100), filename: 'doomed.png' });
    await settled(key, a.id);
    const files = async () => (await readdir(dir, { recursive: true })).filter((f) => f.includes(a.id));
    expect((await files()).length).toBeGreaterThanOrEqual(3); // the directory, original, thumbnail, mms
    const res = await call(srv, 'DELETE', `/v1/assets/${a.id}`, { key });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, id: a.id });
    expect((await call(srv, 'GET', `/v1/assets/${a.id}`, { key })).status).toBe(404);
    expect((await download(key, a.id, 'original')).status).toBe(404);
    expect(await files()).toEqual([]);
    expect((await call(srv, 'DELETE', `/v1/assets/${a.id}`, { key })).status).toBe(404);
  });
});

describe('tenancy and scopes', () => {
  it("answers 404 for another organization's asset on every operation", async () => {
    const a = await uploaded(key, { data: await png(20, 20), filename: 'mine.png' });
    await settled(key, a.id);
    const asOther = (method: string, path: string, body?: unknown) => call(srv, method, path, { key: otherKey, ...(body ? { body } : {}) });
    expect((await asOther('GET', `/v1/assets/${a.id}`)).status).toBe(404);
    expect((await asOther('PATCH', `/v1/assets/${a.id}`, { name: 'x' })).status).toBe(404);
    expect((await asOther('DELETE', `/v1/assets/${a.id}`)).status).toBe(404);
    expect((await asOther('POST', `/v1/assets/${a.id}/crop`, { x: 0, y: 0, width: 1, height: 1 })).status).toBe(404);
    expect((await asOther('POST', `/v1/assets/${a.id}/resize`, { width: 1, height: 1 })).status).toBe(404);
    expect((await download(otherKey, a.id, 'original')).status).toBe(404);
    expect((await download(otherKey, a.id, 'thumbnail')).status).toBe(404);
    const list = await call(srv, 'GET', '/v1/assets?limit=100&includeErrors=true', { key: otherKey });
    expect(list.body.data.map((x: { id: string }) => x.id)).not.toContain(a.id);
    // another organization's folder is unknown in a body
    const folder = (await call(srv, 'POST', '/v1/asset-folders', { key, body: { name: 'Not yours' } })).body.data;
    const foreign = await upload(otherKey, { data: await png(5, 5), filename: 'x.png' }, { folderId: folder.id });
    expect(foreign.status).toBe(404);
    expect(foreign.body.details[0].field).toBe('body.folderId');
    const mine = await uploaded(otherKey, { data: await png(5, 5), filename: 'x.png' });
    expect((await call(srv, 'PATCH', `/v1/assets/${mine.id}`, { key: otherKey, body: { folderId: folder.id } })).status).toBe(404);
    expect((await call(srv, 'GET', `/v1/assets?folderId=${folder.id}`, { key: otherKey })).body.data).toEqual([]);
  });

  it('needs assets:create to upload (403 with a read-only key)', async () => {
    const org = await srv.newOrg('Read-only assets org');
    const readOnly = await srv.newKey(org.organizationId, ['assets:read']);
    const res = await upload(readOnly.secret, { data: await png(5, 5), filename: 'x.png' });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
    expect((await call(srv, 'GET', '/v1/assets', { key: readOnly.secret })).status).toBe(200);
    expect((await call(srv, 'GET', '/v1/assets')).status).toBe(401);
  });
});

describe('downloadAssetVariant streams', () => {
  it('a 20 MB video from the filesystem store: identical bytes, Content-Length, 304 on its ETag', async () => {
    const bytes = mp4(20 * 1024 * 1024);
    const video = await uploaded(key, { data: bytes, filename: 'clip.mp4' });
    expect(video).toMatchObject({ type: 'video', mimeType: 'video/mp4', size_bytes: bytes.length });
    const got = await download(key, video.id, 'original');
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('video/mp4');
    expect(got.headers.get('content-length')).toBe(String(bytes.length));
    expect(sha256(got.bytes)).toBe(sha256(bytes));
    expect((await download(key, video.id, 'original', { 'if-none-match': `W/${got.headers.get('etag')}, "other"` })).status).toBe(304);
    expect((await download(key, video.id, 'original', { 'if-none-match': '"not-this-one"' })).status).toBe(200);
  });
});

describe('S3-compatible storage (s3rver)', () => {
  let s3: S3rverLike;
  let s3dir: string;
  let s3srv: TestServer;
  let endpoint: string;
  const bucket = 'assets-test';

  beforeAll(async () => {
    s3dir = await mkdtemp(join(tmpdir(), 's3rver-'));
    s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3dir, configureBuckets: [{ name: bucket }] });
    const address = await s3.run();
    endpoint = `http://127.0.0.1:${address.port}`;
    s3srv = await startTestServer({
      workers: true,
      config: {
        storage: {
          kind: 's3',
          bucket,
          endpoint,
          region: 'us-east-1',
          accessKeyId: 'S3RVER',
          secretAccessKey: 'S3RVER',
          forcePathStyle: true,
          prefix: 'media/',
        },
      },
    });
  });
  afterAll(async () => {
    await s3srv?.close();
    await s3?.close();
    await rm(s3dir, { recursive: true, force: true });
  });

  it('stores, processes, serves, crops and deletes through the bucket', async () => {
    const k = (await s3srv.newOrg('S3 org')).apiKey.secret;
    const bytes = await jpeg(500, 250);
    const a = await uploaded(k, { data: bytes, filename: 'photo.jpg' }, {}, s3srv);
    expect((await settled(k, a.id, s3srv)).status).toBe('ready');
    const thumb = await download(k, a.id, 'thumbnail', {}, s3srv);
    expect(thumb.status).toBe(200);
    expect(await dimensions(thumb.bytes)).toMatchObject({ width: 320, height: 160, format: 'jpeg' });
    expect((await download(k, a.id, 'original', {}, s3srv)).bytes.equals(bytes)).toBe(true);

    const resized = await call(s3srv, 'POST', `/v1/assets/${a.id}/resize`, { key: k, body: { width: 100, height: 100, fit: 'contain' } });
    expect(resized.status, resized.text).toBe(201);
    expect(await dimensions((await download(k, resized.body.data.id, 'original', {}, s3srv)).bytes)).toMatchObject({
      width: 100,
      height: 100,
    });

    const big = mp4(20 * 1024 * 1024);
    const video = await uploaded(k, { data: big, filename: 'big.mp4' }, {}, s3srv);
    const fromBucket = await fetch(local(video.url, s3srv)); // a signed link: no key
    expect(fromBucket.status).toBe(200);
    expect(fromBucket.headers.get('content-length')).toBe(String(big.length));
    expect(sha256(Buffer.from(await fromBucket.arrayBuffer()))).toBe(sha256(big));

    const store = new S3Store({
      bucket,
      endpoint,
      region: 'us-east-1',
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
      prefix: 'media/',
    });
    const org = (await call(s3srv, 'GET', `/v1/assets/${a.id}`, { key: k })).body.data;
    expect(org.id).toBe(a.id);
    expect((await call(s3srv, 'DELETE', `/v1/assets/${a.id}`, { key: k })).status).toBe(200);
    expect((await download(k, a.id, 'original', {}, s3srv)).status).toBe(404);
    store.destroy();
  });

  it('implements put, get as a stream, delete and a missing key', async () => {
    const store = new S3Store({
      bucket,
      endpoint,
      region: 'us-east-1',
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
      prefix: '',
    });
    await store.put('direct/test/object', Buffer.from('hello'), 'text/plain');
    expect((await readAll((await store.get('direct/test/object'))!)).toString()).toBe('hello');
    const opened = (await store.open('direct/test/object'))!;
    expect(opened.size).toBe(5);
    expect((await readAll(opened.body)).toString()).toBe('hello');
    expect(await store.open('direct/test/missing')).toBeNull();
    await store.delete('direct/test/object');
    expect(await store.get('direct/test/object')).toBeNull();
    await store.delete('direct/test/object'); // deleting a missing object is fine
    await expect(store.put('../escape', Buffer.from('x'), 'text/plain')).rejects.toThrow(/invalid storage key/);
    store.destroy();
  });
});

describe('storage configuration', () => {
  const base = { NODE_ENV: 'test', DATA_DIR: '/srv/data' };
  it('defaults to the filesystem under DATA_DIR and reads the S3 variables', () => {
    expect(loadConfig(base).storage).toEqual({ kind: 'fs', dir: '/srv/data/assets' });
    expect(loadConfig({ ...base, STORAGE_DIR: '/mnt/media' }).storage).toEqual({ kind: 'fs', dir: '/mnt/media' });
    expect(
      loadConfig({
        ...base,
        STORAGE: 's3',
        S3_BUCKET: 'media-bucket',
        S3_ENDPOINT: 'http://minio:9000/',
        S3_REGION: 'eu-west-1',
        S3_ACCESS_KEY_ID: 'AK',
        S3_SECRET_ACCESS_KEY: 'SK',
        S3_FORCE_PATH_STYLE: '1',
        S3_PREFIX: 'media',
      }).storage,
    ).toEqual({
      kind: 's3',
      bucket: 'media-bucket',
      endpoint: 'http://minio:9000',
      region: 'eu-west-1',
      accessKeyId: 'AK',
      secretAccessKey: 'SK',
      forcePathStyle: true,
      prefix: 'media/',
    });
    expect(loadConfig({ ...base, PORT: '8080' }).assetBaseUrl).toBe('http://localhost:8080');
  });

  it('refuses bad storage settings with a clear message', () => {
    const bad: Array<[Record<string, string>, RegExp]> = [
      [{ STORAGE: 'gcs' }, /STORAGE must be fs or s3/],
      [{ STORAGE: 's3' }, /S3_BUCKET/],
      [{ STORAGE: 's3', S3_BUCKET: 'Bad_Bucket' }, /S3_BUCKET/],
      [{ STORAGE: 's3', S3_BUCKET: 'ok-bucket', S3_ACCESS_KEY_ID: 'AK' }, /set together/],
      [{ STORAGE: 's3', S3_BUCKET: 'ok-bucket', S3_ENDPOINT: 'ftp://x' }, /S3_ENDPOINT/],
      [{ STORAGE: 's3', S3_BUCKET: 'ok-bucket', S3_FORCE_PATH_STYLE: 'maybe' }, /S3_FORCE_PATH_STYLE/],
      [{ STORAGE: 's3', S3_BUCKET: 'ok-bucket', S3_PREFIX: '../x' }, /S3_PREFIX/],
      [{ ASSET_BASE_URL: 'not a url' }, /ASSET_BASE_URL/],
    ];
    for (const [env, message] of bad) {
      expect(() => loadConfig({ ...base, ...env }), JSON.stringify(env)).toThrow(ConfigError);
      expect(() => loadConfig({ ...base, ...env })).toThrow(message);
    }
  });
});
