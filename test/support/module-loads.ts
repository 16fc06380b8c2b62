// Loaded with `node --import` by test/startup-lazy.test.ts: prints one stderr line, `module-loaded <package>`, the
// first time the process resolves a file of a package named in MODULE_LOADS_WATCH (comma-separated).
import { registerHooks } from 'node:module';

const watched = (process.env.MODULE_LOADS_WATCH ?? '').split(',').filter(Boolean);
const seen = new Set<string>();

registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    for (const name of watched) {
      if (!seen.has(name) && resolved.url.includes(`/node_modules/${name}/`)) {
        seen.add(name);
        process.stderr.write(`module-loaded ${name}\n`);
      }
    }
    return resolved;
  },
});
