// API key lookups cached in-process, so a request costs one round trip, not two. Every lookup is cached, the
// ones that found nothing too: a prefix that matches no key, a live key and a revoked key then take the same
// path (the database on the first request, memory for the next ones), so response times do not tell which
// prefixes exist. Found rows and absences are kept apart, so a flood of made-up prefixes cannot push live keys
// out of the cache.
//
// Changes stay immediate: revocation, rotation and creation run `pg_notify('api_keys_changed', …)` in their
// transaction, with the key id (drops the cached row) and, for a created or rotated key, its new prefix
// (drops a cached absence, so a new key is never refused). Every API process LISTENs and evicts on commit, and
// the process that made the change evicts before it answers. While the LISTEN connection is down the cache is
// empty and bypassed, so a lost notification can never keep a revoked key alive or a new key refused; the TTL
// is only a backstop.
import pg from 'pg';
import type { ApiKeyRow } from '../db/schema.ts';

export const API_KEYS_CHANNEL = 'api_keys_changed';

/** A notification payload that names a prefix (`msk_…`) rather than a key id (a UUID). */
const isPrefixPayload = (payload: string) => payload.startsWith('msk_');

type Entry<T> = { value: T; cachedAt: number };

export class ApiKeyCache {
  private readonly found = new Map<string, Entry<ApiKeyRow>>();
  private readonly absent = new Map<string, Entry<null>>();
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
    client.on('notification', (msg) => {
      const payload = msg.payload ?? '';
      if (isPrefixPayload(payload)) this.evictPrefix(payload);
      else this.evict(payload);
    });
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

  /** The cached lookup of a prefix: the row, null when no key has it, undefined when not cached. */
  get(prefix: string, now = Date.now()): ApiKeyRow | null | undefined {
    if (!this.listening) return undefined;
    const entry = this.found.get(prefix) ?? this.absent.get(prefix);
    if (!entry) return undefined;
    if (now - entry.cachedAt > this.ttlMs) {
      this.found.delete(prefix);
      this.absent.delete(prefix);
      return undefined;
    }
    return entry.value;
  }

  /** Caches the result of looking up `prefix` (null: no key has it). */
  set(prefix: string, row: ApiKeyRow | null, snapshot: number, now = Date.now()): void {
    if (!this.listening || snapshot !== this.generation) return;
    if (row) put(this.found, prefix, { value: row, cachedAt: now }, this.maxEntries);
    else put(this.absent, prefix, { value: null, cachedAt: now }, this.maxEntries);
  }

  /** Evicts every cached secret of one key (by key id). */
  evict(apiKeyId: string): void {
    this.generation++;
    for (const [prefix, entry] of this.found) if (entry.value.id === apiKeyId) this.found.delete(prefix);
  }

  /** Forgets what is cached for one prefix (a key was just created or rotated to it). */
  evictPrefix(prefix: string): void {
    this.generation++;
    this.found.delete(prefix);
    this.absent.delete(prefix);
  }

  clear(): void {
    this.generation++;
    this.found.clear();
    this.absent.clear();
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

function put<T>(map: Map<string, Entry<T>>, key: string, entry: Entry<T>, max: number): void {
  if (!map.has(key) && map.size >= max) map.delete(map.keys().next().value!);
  map.set(key, entry);
}
