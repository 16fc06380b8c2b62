// Entry point of `npm start`. JavaScript, not TypeScript, so that a start can skip Node's type stripper: Node strips
// a .ts file's types with a WebAssembly module it loads at the first .ts file it meets (about 100 ms of CPU). This
// file first enables Node's on-disk compile cache, which also keeps each .ts file stripped, so every start after the
// first finds the whole program there and never loads the stripper (the cache also roughly halves the time spent
// importing dependencies). Then it points Kysely's imports at its bundle (src/bundled-kysely.ts) and starts the
// server (src/server.ts).
import { enableCompileCache } from 'node:module';

enableCompileCache?.();
const { useBundledKysely } = await import('./bundled-kysely.ts');
useBundledKysely();
await import('./server.ts');
