// One interface for where asset bytes live: the filesystem (default) or an S3-compatible bucket. Keys are
// relative paths made by the caller from ids (`<org>/<asset>/<variant>`), checked by every store.
import type { Readable } from 'node:stream';

/** An object opened for reading: its bytes as a stream and its length in bytes (null when the store does not say). */
export type StoredObject = { body: Readable; size: number | null };

export interface ObjectStore {
  /** Stores the bytes under `key`, replacing any previous object. */
  put(key: string, data: Buffer, contentType: string): Promise<void>;
  /**
   * Stores what `data` yields under `key` as it comes (large generated files: flat memory), replacing any previous
   * object only once the whole stream has been written; a failing stream leaves no object behind. Returns the bytes.
   */
  putStream(key: string, data: AsyncIterable<Buffer | string>, contentType: string): Promise<number>;
  /** The object's bytes as a stream, or null when there is no such object. */
  get(key: string): Promise<Readable | null>;
  /** As `get`, with the object's length for a download's Content-Length (downloads stream: flat memory). */
  open(key: string): Promise<StoredObject | null>;
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
