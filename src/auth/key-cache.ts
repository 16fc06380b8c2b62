// Authenticated keys cached in-process, so a request costs one round trip, not two. Revocation and rotation
// stay immediate: they run `pg_notify('api_keys_changed', <id>)` in the same transaction, every API process
// LISTENs and evicts on commit, and the process that made the change evicts before it answers. While the
// LISTEN connection is down the cache is empty and bypassed, so a lost notification can never keep a
// revoked key alive; the TTL is only a backstop.
import pg from 'pg';
import type { ApiKeyRow } from '../db/schema.ts';

export const API_KEYS_CHANNEL = 'api_keys_changed';

type Entry = { row: ApiKeyRow; cachedAt: number };

export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  private generation = 0;
  private listening = false;
  private client: pg.Client | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;

  private readonly url: string;
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(url: string, ttlMs = 10_000, maxEntries = 10_000) {
    this.url = url;
    this.ttlMs = ttlMs;
    this.maxEntries = maxEntries;
  }

  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: 'messaging-service-api:key-cache' });
    client.on('notification', (msg) => this.evict(msg.payload ?? ''));
    const lost = () => {
      if (this.client !== client) return;
      this.listening = false;
      this.client = undefined;
      this.clear();
      client.end().catch(() => {});
      if (!this.closed) this.retry = setTimeout(() => void this.start().catch(lost), 1000);
    };
    client.on('error', lost);
    client.on('end', lost);
    await client.connect();
    await client.query(`LISTEN ${API_KEYS_CHANNEL}`);
    this.client = client;
    this.listening = true;
  }

  /** A token to pass to set(): a lookup that raced an eviction is not cached. */
  snapshot(): number {
    return this.generation;
  }

  get(prefix: string, now = Date.now()): ApiKeyRow | undefined {
    if (!this.listening) return undefined;
    const entry = this.entries.get(prefix);
    if (!entry) return undefined;
    if (now - entry.cachedAt > this.ttlMs) {
      this.entries.delete(prefix);
      return undefined;
    }
    return entry.row;
  }

  set(row: ApiKeyRow, snapshot: number, now = Date.now()): void {
    if (!this.listening || snapshot !== this.generation) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(row.prefix, { row, cachedAt: now });
  }

  /** Evicts every cached secret of one key (by key id). */
  evict(apiKeyId: string): void {
    this.generation++;
    for (const [prefix, entry] of this.entries) if (entry.row.id === apiKeyId) this.entries.delete(prefix);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  get active(): boolean {
    return this.listening;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    this.listening = false;
    this.clear();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
