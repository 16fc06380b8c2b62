// The server's `kysely` and `kysely/migration` imports load generated/kysely/ (scripts/bundle-kysely.ts, made by
// `npm run generate`): three files instead of Kysely's 257 ESM modules, 8-13 ms of CPU instead of 120-200 ms at
// start (issue 38, bench part a). Only when the bundle was made from the installed Kysely (its first line names the
// version): otherwise, or without the bundle, the imports resolve to node_modules/kysely as before. Registered by
// the entry points before anything imports Kysely, so the process holds one Kysely; tests run in vitest import
// node_modules/kysely, and the processes they start use the bundle.
import { readFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

export const KYSELY_BANNER = (version: string): string => `// Kysely ${version}, bundled by scripts/bundle-kysely.ts`;

const BUNDLE = new URL('../generated/kysely/', import.meta.url);
const ENTRIES: Record<string, string> = { kysely: 'index.js', 'kysely/migration': 'migration.js' };

/** Points `kysely` imports at the bundle; false (nothing registered) when it is missing or made from another version. */
export function useBundledKysely(): boolean {
  let installed: string;
  let firstLine: string;
  try {
    installed = (JSON.parse(readFileSync(new URL('../node_modules/kysely/package.json', import.meta.url), 'utf8')) as { version: string })
      .version;
    firstLine = readFileSync(new URL(ENTRIES.kysely!, BUNDLE), 'utf8').slice(0, 200).split('\n', 1)[0]!;
  } catch {
    return false;
  }
  if (firstLine !== KYSELY_BANNER(installed)) return false;
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const file = ENTRIES[specifier];
      return file ? { url: new URL(file, BUNDLE).href, format: 'module', shortCircuit: true } : nextResolve(specifier, context);
    },
  });
  return true;
}
