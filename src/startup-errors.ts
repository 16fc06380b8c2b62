// What an operator sees when the service cannot start: one line saying what happened and what to do, instead
// of a stack trace or `undefined`. The raw error follows only at LOG_LEVEL=debug.
import type { Config } from './config.ts';

const DB_UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET']);

/** PostgreSQL connection failures (network, authentication, missing database, server shutting down). */
export function isDatabaseUnavailable(error: unknown): boolean {
  const e = error as { code?: string; message?: string } | null;
  if (!e || typeof e !== 'object') return false;
  if (e.code && DB_UNREACHABLE.has(e.code)) return true;
  // 57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now, 08xxx connection exceptions
  if (e.code && (/^08/.test(e.code) || ['57P01', '57P02', '57P03'].includes(e.code))) return true;
  // pg's own words for a connection that broke ('… is not queryable': a statement on a connection the server ended
  // while it was checked out, src/db/statement-scope.ts); a wrapped error is judged by its cause.
  if (/Connection terminated|connection timeout|timeout exceeded when trying to connect|not queryable/i.test(e.message ?? '')) return true;
  return 'cause' in e && e.cause !== error && isDatabaseUnavailable(e.cause);
}

export function describeStartupError(error: unknown, config: Pick<Config, 'port' | 'host' | 'databaseUrl'>): string {
  const e = error as { code?: string; message?: string; syscall?: string } | null;
  if (e?.code === 'EADDRINUSE' && e.syscall === 'listen') {
    return `port ${config.port} is already in use on ${config.host}: stop the other process or set PORT to a free port (PORT=0 picks one)`;
  }
  if (e?.code === 'EACCES' && e.syscall === 'listen') return `not allowed to listen on port ${config.port}: use a port above 1023 (PORT)`;
  if (config.databaseUrl && (isDatabaseUnavailable(error) || e?.code === '28P01' || e?.code === '3D000' || e?.code === '28000')) {
    const where = safeTarget(config.databaseUrl);
    const why =
      e?.code === '28P01' || e?.code === '28000'
        ? 'the user name or password was refused'
        : e?.code === '3D000'
          ? 'the database does not exist (create it first)'
          : `${e?.code ?? 'no answer'}: is PostgreSQL running and reachable from here?`;
    return `cannot connect to PostgreSQL at ${where} (DATABASE_URL): ${why}. Unset DATABASE_URL to use the embedded server instead.`;
  }
  return e?.message ?? String(error);
}

/** host:port/database of a connection URL, never its password. */
function safeTarget(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || 5432}${u.pathname}`;
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}
