// `npm run worker` (entry src/worker.js): background workers only (dispatch, receipts, webhooks, imports …), no
// HTTP. Run as many as you like next to the API processes (RUN_WORKERS=0 on those). Callbacks from the carrier
// simulator go to CALLBACK_BASE_URL (an API process). Stops gracefully on SIGTERM/SIGINT.
import { loadConfigOrExit } from './config.ts';
import { exitOnUncaughtErrors } from './process-guard.ts';
import { startRuntime } from './runtime.ts';
import { describeStartupError } from './startup-errors.ts';

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
