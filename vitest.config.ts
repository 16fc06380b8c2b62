import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    // Three test files at once. Vitest's default on a 2-core machine is one (cores − 1), and the files mostly wait
    // (on PostgreSQL, on their servers' workers and timers): one at a time took 827 s and left half the machine
    // idle; three keep it busy (556 s). Files share one PostgreSQL but never an organization or a job queue
    // (test/support/server.ts), so a test counts only its own organizations' rows.
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
