// Entry point of `npm run worker`: background workers only (src/worker-process.ts). JavaScript for the reason
// src/main.js gives: with the compile cache enabled before any .ts file loads, a start after the first never loads
// Node's type stripper.
import { enableCompileCache } from 'node:module';

enableCompileCache?.();
(await import('./bundled-kysely.ts')).useBundledKysely();
await import('./worker-process.ts');
