// Loaded into part (x)'s API process with `node --import ./bench/loop-delay.ts src/main.js` (bench/mixed.ts), never
// by the service itself: the API's event-loop delay (perf_hooks.monitorEventLoopDelay) and its garbage collector's
// pauses, read over the IPC channel the bench opens. 'loop-delay:reset' starts a window (the mixed phase);
// 'loop-delay:read' answers with the window's figures. No endpoint and no setting of the service is involved.
// BENCH_X_CPU_PROFILE=<file>: the window is also profiled (V8's CPU profiler through node:inspector) into that file,
// to be opened in Chrome's DevTools: which work held the loop.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

export type LoopDelayReport = { p50: number; p99: number; max: number; gcMs: number; gcMaxMs: number; gcCount: number };

const histogram = monitorEventLoopDelay({ resolution: 10 });
histogram.enable();
let gc = { total: 0, max: 0, count: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gc.total += entry.duration;
    gc.max = Math.max(gc.max, entry.duration);
    gc.count++;
  }
}).observe({ entryTypes: ['gc'] });

const profileFile = process.env.BENCH_X_CPU_PROFILE;
let session: Session | undefined;

process.on('message', async (m) => {
  if (m === 'loop-delay:reset') {
    if (profileFile) {
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    histogram.reset();
    histogram.enable();
    gc = { total: 0, max: 0, count: 0 };
  } else if (m === 'loop-delay:read') {
    histogram.disable();
    if (session && profileFile) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(profileFile, JSON.stringify(profile));
      session.disconnect();
    }
    const ms = (ns: number) => ns / 1e6;
    const report: LoopDelayReport = {
      p50: ms(histogram.percentile(50)),
      p99: ms(histogram.percentile(99)),
      max: ms(histogram.max),
      gcMs: gc.total,
      gcMaxMs: gc.max,
      gcCount: gc.count,
    };
    process.send?.(report);
  }
});
// The channel must not keep a process alive that would otherwise exit.
process.channel?.unref();
