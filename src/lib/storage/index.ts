// The store configured by STORAGE (src/config.ts): one instance per configuration object, shared by request
// handlers and workers of the process.
import type { StorageConfig } from '../../config.ts';
import { FsStore } from './fs-store.ts';
import { S3Store } from './s3-store.ts';
import type { ObjectStore } from './types.ts';

export { FsStore } from './fs-store.ts';
export { S3Store } from './s3-store.ts';
export { readAll, type ObjectStore, type StoredObject } from './types.ts';

const stores = new WeakMap<StorageConfig, ObjectStore>();

function createStore(config: StorageConfig): ObjectStore {
  return config.kind === 's3' ? new S3Store(config) : new FsStore(config.dir);
}

export function storeFor(config: { storage: StorageConfig }): ObjectStore {
  let store = stores.get(config.storage);
  if (!store) {
    store = createStore(config.storage);
    stores.set(config.storage, store);
  }
  return store;
}
