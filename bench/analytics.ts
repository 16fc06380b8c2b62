// Part (r) of `npm run bench` (bench/run.ts). Not built yet: it prints that it was skipped.
import type { OwnDataBench } from './own-data.ts';

export async function benchAnalytics(_ctx: OwnDataBench): Promise<string[]> {
  return ['(r) not measured yet'];
}
