// The default store: files under a directory (STORAGE_DIR, default DATA_DIR/assets). Writes go to a temporary
// file renamed into place, so a reader never sees half a file.
import { createReadStream } from 'node:fs';
import { mkdir, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { checkKey, type ObjectStore } from './types.ts';

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
