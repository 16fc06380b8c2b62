// The streaming put that exports and report runs write through (src/lib/storage): on the filesystem and on an
// S3-compatible store (s3rver), a small stream (one PUT) and one of several multipart parts arrive byte for byte;
// a stream that fails mid-way leaves no object (the temporary file is removed, the multipart upload aborted) and
// keeps the previous version of the key.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error s3rver ships no type declarations (S3rverLike below is what this file uses)
import S3rverUntyped from 's3rver';
import { FsStore, S3Store, readAll, type ObjectStore } from '../src/lib/storage/index.ts';

type S3rverLike = { run(): Promise<{ port: number }>; close(): Promise<void> };
const S3rver = S3rverUntyped as new (opts: Record<string, unknown>) => S3rverLike;

const MB = 1024 * 1024;
/** `total` bytes of deterministic CSV-like text in 64 KiB chunks (strings, as the CSV writer yields). */
async function* lines(total: number, failAfter?: number): AsyncGenerator<string> {
  let sent = 0;
  for (let i = 0; sent < total; i++) {
    if (failAfter !== undefined && sent >= failAfter) throw new Error('generation failed');
    const chunk = `${String(i).padStart(8, '0')},${'x'.repeat(Math.min(64 * 1024, total - sent) - 10)}\r\n`.slice(0, total - sent);
    sent += Buffer.byteLength(chunk);
    yield chunk;
  }
}
const sha = async (it: AsyncIterable<string>) => {
  const h = createHash('sha256');
  for await (const c of it) h.update(c);
  return h.digest('hex');
};

const dirs: string[] = [];
let s3: S3rverLike;
const stores: Array<[string, () => ObjectStore]> = [];

beforeAll(async () => {
  const fsDir = await mkdtemp(join(tmpdir(), 'exports-fs-'));
  const s3Dir = await mkdtemp(join(tmpdir(), 'exports-s3-'));
  dirs.push(fsDir, s3Dir);
  s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3Dir, configureBuckets: [{ name: 'exports' }] });
  const { port } = await s3.run();
  const fs = new FsStore(fsDir);
  const bucket = new S3Store({
    bucket: 'exports',
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    forcePathStyle: true,
    prefix: 'p/',
  });
  stores.push(['fs', () => fs], ['s3', () => bucket]);
});
afterAll(async () => {
  await s3?.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe.each([['fs'], ['s3']])('putStream on %s', (name) => {
  const store = () => stores.find(([n]) => n === name)![1]();

  it('stores a small and a multipart-sized stream byte for byte and returns their size', async () => {
    for (const size of [1000, 19 * MB + 123]) {
      const key = `analytics-exports/org/${size}.csv`;
      expect(await store().putStream(key, lines(size), 'text/csv')).toBe(size);
      const back = await readAll((await store().get(key))!);
      expect(back.length).toBe(size);
      expect(createHash('sha256').update(back).digest('hex')).toBe(await sha(lines(size)));
    }
  });

  it('a failing stream leaves no object and keeps the previous version', async () => {
    const key = 'analytics-exports/org/failing.csv';
    await expect(store().putStream(key, lines(MB, 0), 'text/csv')).rejects.toThrow('generation failed');
    expect(await store().get(key)).toBeNull();
    await store().putStream(key, lines(1000), 'text/csv');
    await expect(store().putStream(key, lines(20 * MB, 10 * MB), 'text/csv')).rejects.toThrow('generation failed');
    expect((await readAll((await store().get(key))!)).length).toBe(1000);
    if (name === 'fs') expect((await readdir(join(dirs[0]!, 'analytics-exports/org'))).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});
