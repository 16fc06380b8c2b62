// Loaded with `node --import` by test/startup-lazy.test.ts. JavaScript, so that loading it strips no types: on
// SIGUSR2 it prints one stderr line, `type-stripper-loaded true|false`, whether the process has loaded Node's
// TypeScript type stripper (its internal module amaro) so far.
process.on('SIGUSR2', () => {
  process.stderr.write(`type-stripper-loaded ${process.moduleLoadList.some((name) => name.includes('amaro'))}\n`);
});
