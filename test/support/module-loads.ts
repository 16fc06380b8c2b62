// Loaded with `node --import` by test/startup-lazy.test.ts: prints one stderr line, `module-loaded <name>`, the
// first time the process resolves a file of a package named in MODULE_LOADS_WATCH (comma-separated), or a file
// named there by its path in the project (an entry starting with `src/`, printed as given), or reads a data file
// named there (an entry starting with `generated/`: the bundled document, read with fs.readFileSync).
import fs from 'node:fs';
import { registerHooks, syncBuiltinESMExports } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const watched = (process.env.MODULE_LOADS_WATCH ?? '').split(',').filter(Boolean);
const root = pathToFileURL(`${process.cwd()}/`).href;
const seen = new Set<string>();
const note = (name: string) => {
  if (seen.has(name)) return;
  seen.add(name);
  process.stderr.write(`module-loaded ${name}\n`);
};

const matches = (name: string, url: string) => (name.startsWith('src/') ? url === root + name : url.includes(`/node_modules/${name}/`));

registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    for (const name of watched) if (!name.startsWith('generated/') && matches(name, resolved.url)) note(name);
    return resolved;
  },
});

const files = new Map(watched.filter((name) => name.startsWith('generated/')).map((name) => [resolve(name), name]));
if (files.size > 0) {
  const readFileSync = fs.readFileSync;
  fs.readFileSync = ((path: fs.PathOrFileDescriptor, ...rest: unknown[]) => {
    const name = typeof path === 'string' ? files.get(resolve(path)) : undefined;
    if (name) note(name);
    return (readFileSync as (...args: unknown[]) => unknown)(path, ...rest);
  }) as typeof fs.readFileSync;
  syncBuiltinESMExports(); // modules that import { readFileSync } from 'node:fs' get this one
}
