// `npm run worker`: background workers only (dispatch, receipts, webhooks, imports …), no HTTP. Run as many as
// you like next to the API processes (RUN_WORKERS=0 on those). Callbacks from the carrier simulator go to
// CALLBACK_BASE_URL (an API process). Stops gracefully on SIGTERM/SIGINT.
import { enableCompileCache } from 'node:module';

enableCompileCache?.();
// Kysely from its bundle, as the server loads it (src/bundled-kysely.ts).
(await import('./bundled-kysely.ts')).useBundledKysely();
const { loadConfigOrExit } = await import('./config.ts');
const { startRuntime } = await import('./runtime.ts');
const { exitOnUncaughtErrors } = await import('./process-guard.ts');

const { describeStartupError } = await import('./startup-errors.ts');

const config = { ...loadConfigOrExit(), runWorkers: true };
const runtime = await startRuntime(config).catch((error: unknown) => {
  console.error(`cannot start: ${describeStartupError(error, config)}`);
  process.exit(1);
});
exitOnUncaughtErrors(runtime.context.log);
runtime.context.log.info('worker started');
let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  runtime.context.log.info({ signal }, 'worker stopping');
  await runtime.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));
