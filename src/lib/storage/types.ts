// One interface for where asset bytes live: the filesystem (default) or an S3-compatible bucket. Keys are
// relative paths made by the caller from ids (`<org>/<asset>/<variant>`), checked by every store.
import type { Readable } from 'node:stream';

export interface ObjectStore {
  /** Stores the bytes under `key`, replacing any previous object. */
  put(key: string, data: Buffer, contentType: string): Promise<void>;
  /** The object's bytes as a stream, or null when there is no such object. */
  get(key: string): Promise<Readable | null>;
  /** Removes the object; a missing object is not an error. */
  delete(key: string): Promise<void>;
}

const KEY = /^[A-Za-z0-9_-]+(?:\/[A-Za-z0-9_.-]+)*$/;

/** Refuses a key that could leave the store's root (`..`, absolute paths, odd characters). */
export function checkKey(key: string): string {
  if (key.length > 512 || !KEY.test(key) || key.split('/').some((s) => s === '.' || s === '..')) {
    throw new Error(`invalid storage key ${JSON.stringify(key.slice(0, 80))}`);
  }
  return key;
}

/** Reads a whole stream into memory (asset files are at most 25 MB). */
export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}
