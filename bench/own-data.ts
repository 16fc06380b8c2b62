// What bench/run.ts hands to a part that seeds its own organization and data (parts l and r).
export type OwnDataBench = {
  /** The run's embedded PostgreSQL, already migrated (pg-boss's schema is created by the first server start). */
  databaseUrl: string;
  /** Environment for spawned API/worker processes (DATABASE_URL, NODE_ENV=production, RUN_WORKERS …). */
  env: NodeJS.ProcessEnv;
  freePort: () => Promise<number>;
  waitFor: (url: string, timeoutMs?: number) => Promise<void>;
  /** Register spawned processes here so an interrupted run stops them. */
  children: Array<{ kill: () => void }>;
  /** BENCH_ROUNDS: how many rounds a median is taken over. */
  rounds: number;
};
