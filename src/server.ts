// The API server: serve on PORT. Graceful shutdown on SIGTERM/SIGINT: stop accepting, let in-flight
// requests finish, stop workers, close the pool, stop the embedded database.
import { createServer } from 'node:http';
import { loadConfigOrExit } from './config.ts';
import { createApp } from './app.ts';
import { startRuntime } from './runtime.ts';
import { CarrierSimulator } from './providers/simulator.ts';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const runtime = await startRuntime(config);
  const { log } = runtime.context;
  const { express } = await createApp(runtime.context);
  const server = createServer(express);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  if (runtime.context.provider instanceof CarrierSimulator) runtime.context.provider.callbackBaseUrl ??= `http://127.0.0.1:${port}`;
  log.info({ port, database: config.databaseUrl ? 'DATABASE_URL' : `embedded (${config.dataDir})` }, `listening on http://localhost:${port}`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const forced = setTimeout(() => {
      log.error('shutdown took longer than 30 s; exiting');
      process.exit(1);
    }, 30_000);
    forced.unref();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    await runtime.close();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
