// `npm run generate`'s step for start-up (issue 38, bench part a): generated/kysely/, Kysely's ESM build bundled into
// three files (its entry, its `kysely/migration` entry, and the chunk they share). Kysely 0.29 publishes only an ESM
// build of 257 modules, and Node resolves, reads and links each one: importing it cost 120-200 ms of CPU at start,
// the bundle 8-13 ms (fresh processes, compile cache warm). src/bundled-kysely.ts points the server's `kysely`
// imports at these files when they were made from the installed version (the first line names it); types still come
// from node_modules/kysely. The code is Kysely's, unminified, in its module order (rolldown, vite's bundler).
// Usage: node scripts/bundle-kysely.ts [output directory]   (generated/kysely)
import { copyFileSync, readFileSync } from 'node:fs';
import { build } from 'rolldown';
import { KYSELY_BANNER } from '../src/bundled-kysely.ts';

const [dir = 'generated/kysely'] = process.argv.slice(2);
const { version } = JSON.parse(readFileSync('node_modules/kysely/package.json', 'utf8')) as { version: string };
await build({
  input: { index: 'node_modules/kysely/dist/index.js', migration: 'node_modules/kysely/dist/migration/index.js' },
  output: { dir, format: 'esm', entryFileNames: '[name].js', chunkFileNames: '[name].js', banner: KYSELY_BANNER(version) },
  logLevel: 'warn',
});
// Kysely is MIT-licensed: its notice travels with every copy of its code.
copyFileSync('node_modules/kysely/LICENSE', `${dir}/LICENSE`);
