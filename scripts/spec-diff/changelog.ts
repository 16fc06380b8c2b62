// Acknowledgement of breaking changes through CHANGELOG.md (rule documented at the top of CHANGELOG.md).
// Only the `## Unreleased` section counts, so entries of released versions never silence a new change. Within it, a
// line acknowledges a change when it starts with `BREAKING:` (after optional indentation and a `-`, `*` or `+` list
// bullet) and the first three whitespace-separated words after it are the change's kind, METHOD and path (backticks
// around words ignored, METHOD case-insensitive, path parameter names ignored: `{id}` matches `{contactId}`).
// Anything after those three words is free text. A mere mention of "BREAKING:" inside a sentence does not count.
import { normalizePath, type Change } from './diff.ts';

export interface Acknowledgement {
  kind: string;
  method: string;
  /** Normalized path (parameter names erased) or webhook event name. */
  path: string;
  /** 1-based line number in the changelog, for messages. */
  line: number;
}

const UNRELEASED = /^##\s+\[?unreleased\]?\s*$/i;
const NEXT_SECTION = /^#{1,2}\s/;
const ENTRY = /^\s*(?:[-*+]\s+)?BREAKING:(.*)$/;

export function parseAcknowledgements(changelog: string): Acknowledgement[] {
  const acks: Acknowledgement[] = [];
  const lines = changelog.split(/\r?\n/);
  const start = lines.findIndex((l) => UNRELEASED.test(l.trim()));
  if (start === -1) return acks;
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (NEXT_SECTION.test(line)) break;
    const entry = ENTRY.exec(line);
    if (!entry) continue;
    const words = (entry[1] ?? '')
      .trim()
      .split(/\s+/)
      .map((w) => w.replace(/^`+|`+$/g, ''));
    const [kind, method, path] = words;
    if (kind && method && path) acks.push({ kind, method: method.toUpperCase(), path: normalizePath(path), line: i + 1 });
  }
  return acks;
}

export function isAcknowledged(change: Change, acks: Acknowledgement[]): boolean {
  const path = normalizePath(change.path);
  return acks.some((a) => a.kind === change.kind && a.method === change.method.toUpperCase() && a.path === path);
}

/** The changelog line that would acknowledge `change` (printed as a hint for unacknowledged ones). */
export const acknowledgementLine = (change: Change): string =>
  `- BREAKING: ${change.kind} ${change.method} ${change.path} <why, what clients must do>`;
