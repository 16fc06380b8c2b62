// Text report of a diff: one line per change, a summary and the exit code (1 when a breaking change is not
// acknowledged in the changelog).
import type { Change } from './diff.ts';
import { acknowledgementLine, isAcknowledged, type Acknowledgement } from './changelog.ts';

export interface Report {
  lines: string[];
  exitCode: 0 | 1;
  breaking: number;
  acknowledged: number;
  nonBreaking: number;
}

export function renderReport(changes: Change[], acks: Acknowledgement[], changelogName = 'CHANGELOG.md'): Report {
  const kindWidth = Math.max(0, ...changes.map((c) => c.kind.length));
  const opWidth = Math.max(0, ...changes.map((c) => c.method.length + 1 + c.path.length));
  const lines: string[] = [];
  const missing: Change[] = [];
  let acknowledged = 0;
  for (const c of changes) {
    const acked = c.breaking && isAcknowledged(c, acks);
    if (acked) acknowledged++;
    else if (c.breaking) missing.push(c);
    const tag = c.breaking ? 'BREAKING' : 'ok';
    const op = `${c.method} ${c.path}`;
    const note = acked ? `  (acknowledged in ${changelogName})` : '';
    lines.push(`${tag.padEnd(10)}${c.kind.padEnd(kindWidth)}  ${op.padEnd(opWidth)}  ${c.location}  ${c.detail}${note}`);
  }
  const breaking = changes.filter((c) => c.breaking).length;
  const nonBreaking = changes.length - breaking;
  lines.push('');
  lines.push(
    `spec-diff: ${changes.length} change(s): ${breaking} breaking (${acknowledged} acknowledged, ${missing.length} not), ${nonBreaking} non-breaking`,
  );
  if (missing.length > 0) {
    lines.push(`Unacknowledged breaking changes. If intended, add under "## Unreleased" in ${changelogName}:`);
    const hints = new Set(missing.map(acknowledgementLine));
    for (const h of hints) lines.push(`  ${h}`);
  }
  return { lines, exitCode: missing.length > 0 ? 1 : 0, breaking, acknowledged, nonBreaking };
}
