// CI guard: generated/ must be what `npm run generate` makes from openapi.yaml (and the installed Kysely) right now.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'generated-'));
try {
  const bin = (name: string) => join('node_modules', '.bin', name);
  execFileSync(bin('redocly'), ['bundle', 'openapi.yaml', '-o', join(dir, 'openapi.json')], { stdio: 'pipe' });
  // The flags of `npm run generate`: request fields that have a default stay optional for clients.
  execFileSync(bin('openapi-typescript'), [join(dir, 'openapi.json'), '-o', join(dir, 'api.d.ts'), '--default-non-nullable', 'false'], {
    stdio: 'pipe',
  });
  // The operation heads start-up routes by (scripts/generate-operations.ts).
  execFileSync(process.execPath, ['scripts/generate-operations.ts', join(dir, 'openapi.json'), join(dir, 'operations.json')], {
    stdio: 'pipe',
  });
  // Kysely's bundle, which the server imports instead of Kysely's modules (scripts/bundle-kysely.ts).
  execFileSync(process.execPath, ['scripts/bundle-kysely.ts', join(dir, 'kysely')], { stdio: 'pipe' });
  const stale = [
    'openapi.json',
    'api.d.ts',
    'operations.json',
    ...['index.js', 'migration.js', 'migrator.js', 'LICENSE'].map((f) => join('kysely', f)),
  ].filter((f) => readFileSync(join(dir, f), 'utf8') !== readFileSync(join('generated', f), 'utf8'));
  if (stale.length) {
    console.error(`generated/ is stale (${stale.join(', ')}): run \`npm run generate\` and commit the result.`);
    process.exit(1);
  }
  console.log('generated/ is up to date');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
