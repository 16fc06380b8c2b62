// Compares the operations in the project's openapi.yaml (path items may be $ref'd files) with the specification's
// list, vendored as test/fixtures/endpoints.tsv (see test/fixtures/README.md).
// Usage: node scripts/spec-coverage.ts [path/to/openapi.yaml]   (run from the project root; npm run spec:check)
// Exit 0: every specified operation is present and has an operationId. Exit 1: something is missing or the
// document does not exist. Exit 2: the yaml package is not installed.
// A TypeScript port of the specification's own tools/spec-coverage.mjs: same output, same exit codes.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

type Json = Record<string, any>;

export const endpointsTsvPath = fileURLToPath(new URL('../test/fixtures/endpoints.tsv', import.meta.url));

/** The specification's operations: [section, METHOD, path] per row, header row skipped. */
export function readEndpoints(file = endpointsTsvPath): Array<[string, string, string]> {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.split('\t') as [string, string, string]);
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

async function main(): Promise<number> {
  const specFile = resolve(process.argv[2] ?? 'openapi.yaml');
  if (!existsSync(specFile)) {
    console.log(`spec coverage: no ${specFile}: 0/194`);
    return 1;
  }
  let parse: (text: string) => unknown;
  try {
    parse = (await import('yaml')).parse;
  } catch {
    console.log('spec coverage: install the project first (no yaml or js-yaml in node_modules)');
    return 2;
  }
  const load = (f: string): Json => parse(readFileSync(f, 'utf8')) as Json;

  const doc = load(specFile);
  const have = new Map<string, Json>();
  for (const [path, item0] of Object.entries((doc.paths ?? {}) as Json)) {
    let item = item0 as Json | undefined;
    if (item && typeof item.$ref === 'string' && !item.$ref.startsWith('#')) {
      const [file, pointer] = item.$ref.split('#') as [string, string | undefined];
      item = load(resolve(dirname(specFile), file));
      for (const part of (pointer ?? '').split('/').filter(Boolean)) item = item?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    for (const m of METHODS) if (item?.[m]) have.set(`${m.toUpperCase()} ${path}`, item[m] as Json);
  }
  const want = readEndpoints();
  const missing = want.filter(([, m, p]) => !have.has(`${m} ${p}`));
  const wantSet = new Set(want.map(([, m, p]) => `${m} ${p}`));
  const extra = [...have.keys()].filter((k) => !wantSet.has(k));
  const noOpId = [...have.entries()].filter(([, op]) => !op.operationId).map(([k]) => k);
  if (missing.length) console.log('missing:\n  ' + missing.map(([s, m, p]) => `${s}: ${m} ${p}`).join('\n  '));
  if (extra.length) console.log('beyond the specification:\n  ' + extra.join('\n  '));
  if (noOpId.length) console.log('without operationId:\n  ' + noOpId.join('\n  '));
  console.log(
    `spec coverage: ${want.length - missing.length}/${want.length} specified operations in ${specFile.split('/').pop()} (openapi ${doc.openapi}, version ${doc.info?.version}); ${extra.length} beyond; ${noOpId.length} without operationId`,
  );
  return missing.length || noOpId.length ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = await main();
