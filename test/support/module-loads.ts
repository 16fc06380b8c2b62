// Loaded with `node --import` by test/startup-lazy.test.ts: prints one stderr line, `module-loaded <name>`, the
// first time the process resolves a file of a package named in MODULE_LOADS_WATCH (comma-separated), or a file
// named there by its path in the project (an entry starting with `src/`, printed as given).
import { registerHooks } from 'node:module';
import { pathToFileURL } from 'node:url';

const watched = (process.env.MODULE_LOADS_WATCH ?? '').split(',').filter(Boolean);
const root = pathToFileURL(`${process.cwd()}/`).href;
const seen = new Set<string>();

const matches = (name: string, url: string) => (name.startsWith('src/') ? url === root + name : url.includes(`/node_modules/${name}/`));

registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    for (const name of watched) {
      if (!seen.has(name) && matches(name, resolved.url)) {
        seen.add(name);
        process.stderr.write(`module-loaded ${name}\n`);
      }
    }
    return resolved;
  },
});
