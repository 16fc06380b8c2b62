// The last line of defence, never the fix: an error that escapes every handler is logged and the process exits
// for its supervisor to restart it. Accepted messages and jobs live in PostgreSQL, so nothing is lost.
import type { Logger } from 'pino';

export function exitOnUncaughtErrors(log: Logger): void {
  process.on('uncaughtException', (error) => {
    log.fatal({ err: error }, 'uncaught exception; exiting');
    process.exit(1);
  });
  process.on('unhandledRejection', (reason) => {
    log.fatal({ err: reason }, 'unhandled rejection; exiting');
    process.exit(1);
  });
}
