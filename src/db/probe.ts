// The health check's own database connection (getHealth, src/domain/health.ts). `/health` asks whether the
// database answers, not whether this process's pool has a free connection: under load every pooled connection
// is busy with requests, and a probe queued behind them measured the queue (tens of milliseconds, seconds when
// the pool is saturated), so a busy but healthy instance looked slow or down to its load balancer, and every
// instance would leave at once. One connection, made on first use and replaced after any error or timeout, costs
// the server one backend per process, like the API key cache's LISTEN connection.
import pg from 'pg';

type Connection = { client: pg.Client; ready: Promise<void> };

export class DatabaseProbe {
  private current: Connection | undefined;
  private readonly url: string;

  constructor(url: string) {
    this.url = url;
  }

  /**
   * Resolves when `select 1` answered within `timeoutMs`; rejects otherwise. A connection that failed or timed
   * out is closed, so a later probe never queues behind a stuck one.
   */
  async ping(timeoutMs: number): Promise<void> {
    const connection = this.connection();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        connection.ready.then(() => connection.client.query('select 1')),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (error) {
      this.forget(connection);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    const connection = this.current;
    this.current = undefined;
    await connection?.client.end().catch(() => undefined);
  }

  private connection(): Connection {
    if (!this.current) {
      const client = new pg.Client({ connectionString: this.url, application_name: 'messaging-service-api:health' });
      const connection: Connection = { client, ready: client.connect().then(() => undefined) };
      // A broken connection is replaced on the next probe; its error must not reach the process.
      client.on('error', () => this.forget(connection));
      client.on('end', () => this.forget(connection));
      connection.ready.catch(() => this.forget(connection));
      this.current = connection;
    }
    return this.current;
  }

  private forget(connection: Connection): void {
    if (this.current !== connection) return;
    this.current = undefined;
    connection.client.end().catch(() => undefined);
  }
}
