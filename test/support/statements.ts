// The statements the service sends, watched at the driver: every pg client of the process (any pool) reports each
// statement it sends while a piece of work runs — its text, parameters and the driver's result (a promise, unless
// the caller passed a callback).
import pg from 'pg';

export type SentStatement = { text: string; values: unknown[]; result: unknown };

/** Runs `work`, calling `seen` with each statement sent meanwhile; the driver is restored after, whatever happens. */
export async function watchingStatements(seen: (statement: SentStatement) => void, work: () => Promise<void>): Promise<void> {
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const result = (original as (...a: unknown[]) => unknown).apply(this, args);
    const first = args[0] as string | { text?: string; values?: unknown[] } | undefined;
    const text = typeof first === 'string' ? first : first?.text;
    const values = (typeof first === 'string' ? args[1] : first?.values) as unknown[] | undefined;
    seen({ text: text ?? '?', values: values ?? [], result });
    return result;
  } as typeof original;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = original;
  }
}
