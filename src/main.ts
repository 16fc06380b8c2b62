// Entry point of `npm start`. Enables Node's on-disk compile cache before anything else loads (it roughly
// halves the time spent importing dependencies on every start after the first), points Kysely's imports at its
// bundle (src/bundled-kysely.ts), then starts the server.
import { enableCompileCache } from 'node:module';

enableCompileCache?.();
const { useBundledKysely } = await import('./bundled-kysely.ts');
useBundledKysely();
await import('./server.ts');
