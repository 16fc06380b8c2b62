// Polls `probe` until `ok` holds (background jobs, deliveries, reviews), failing with the last value seen.
export async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean, what = 'the condition', timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
