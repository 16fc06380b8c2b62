// The default store: files under a directory (STORAGE_DIR, default DATA_DIR/assets). Writes go to a temporary
// file renamed into place, so a reader never sees half a file.
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open as openFile, rename, rm, rmdir, stat, writeFile, type FileHandle } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { checkKey, type ObjectStore, type StoredObject } from './types.ts';

export class FsStore implements ObjectStore {
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  private path(key: string): string {
    const path = resolve(join(this.root, checkKey(key)));
    if (!path.startsWith(this.root + sep)) throw new Error('storage key escapes the store');
    return path;
  }

  async put(key: string, data: Buffer): Promise<void> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await writeFile(tmp, data, { mode: 0o600 });
      await rename(tmp, path);
    } catch (error) {
      await rm(tmp, { force: true });
      throw error;
    }
  }

  async putStream(key: string, data: AsyncIterable<Buffer | string>): Promise<number> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    const out = createWriteStream(tmp, { mode: 0o600 });
    try {
      await pipeline(Readable.from(data, { objectMode: false }), out);
      await rename(tmp, path);
      return out.bytesWritten;
    } catch (error) {
      await rm(tmp, { force: true });
      throw error;
    }
  }

  async get(key: string): Promise<Readable | null> {
    const path = this.path(key);
    try {
      if (!(await stat(path)).isFile()) return null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    return createReadStream(path);
  }

  async open(key: string): Promise<StoredObject | null> {
    let handle: FileHandle;
    try {
      handle = await openFile(this.path(key), 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'EISDIR') return null;
      throw error;
    }
    try {
      // The length of the very file the stream reads (stat of the handle, not of the path).
      const info = await handle.stat();
      if (!info.isFile()) {
        await handle.close();
        return null;
      }
      return { body: handle.createReadStream(), size: info.size };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    const path = this.path(key);
    await rm(path, { force: true });
    // Remove the directories the key made, up to the root, while they are empty.
    for (let d = dirname(path); d.startsWith(this.root + sep); d = dirname(d)) {
      try {
        await rmdir(d);
      } catch {
        break; // not empty (or gone): stop
      }
    }
  }
}
