// The API server: serve on PORT. Graceful shutdown on SIGTERM/SIGINT: stop accepting, let in-flight
// requests finish, stop workers, close the pool, stop the embedded database.
import { loadConfigOrExit } from './config.ts';
import { createApp } from './app.ts';
import { startRuntime } from './runtime.ts';
import { createHttpServer } from './http/http-server.ts';
import { exitOnUncaughtErrors } from './process-guard.ts';
import { describeStartupError } from './startup-errors.ts';

const config = loadConfigOrExit();

async function main(): Promise<void> {
  const runtime = await startRuntime(config);
  const { log } = runtime.context;
  const { express } = await createApp(runtime.context);
  const server = createHttpServer(express);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch(async (error: unknown) => {
    await runtime.close();
    throw error;
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  runtime.providers.endpoint.baseUrl ??= `http://127.0.0.1:${port}`;
  log.info(
    { port, database: config.databaseUrl ? 'DATABASE_URL' : `embedded (${config.dataDir})` },
    `listening on http://localhost:${port}`,
  );
  log.info(`API reference: http://localhost:${port}/docs — first key: npm run --silent admin -- create-org --name <name>`);

  exitOnUncaughtErrors(log);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const graceMs = config.shutdownGraceMs;
    log.info({ signal, graceMs }, 'shutting down');
    // Last resort only: closing the runtime itself hangs.
    const forced = setTimeout(() => {
      log.error('shutdown did not finish; exiting');
      process.exit(1);
    }, graceMs + 15_000);
    forced.unref();
    // Stop accepting; idle keep-alive connections close now; requests in flight get the grace period, then
    // whatever is still open (a client sending its body at 1 byte/s) is closed so the runtime can close cleanly.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const sweep = setInterval(() => server.closeIdleConnections(), 250); // keep-alive connections as their last request ends
    const grace = setTimeout(() => {
      log.warn('grace period over; closing the remaining connections');
      server.closeAllConnections();
    }, graceMs);
    await closed;
    clearTimeout(grace);
    clearInterval(sweep);
    await runtime.close();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  console.error(`cannot start: ${describeStartupError(error, config)}`);
  if (config.logLevel === 'debug' || config.logLevel === 'trace') console.error(error);
  process.exit(1);
});
