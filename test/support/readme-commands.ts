// The README's shell commands, as test/readme.test.ts runs them, and the outputs it shows after them.
//
// A `sh` block is split into commands: a line and its `\` continuations; comment lines are not commands, except
// a `# {…}` line right after a command, which is the output the README shows for it. The block's marker, an HTML
// comment `<!-- not run by test/readme.test.ts: <why> -->` on the line before the fence, makes `skip` the why.
// Inline `npm run --silent admin -- <command> …` spans of the prose are commands too (marked the same way on the
// line before); `npm run --silent admin -- …` alone stands for any command and is not one.

export interface Command {
  /** 1-based line of the README where the command starts. */
  line: number;
  /** The command as written (continuations kept). */
  text: string;
  /** Why it is not run, when its block (or line) is marked. */
  skip?: string;
  /** The `# {…}` output the README shows after it, without the `# `. */
  shown?: string;
}

const MARKER = /<!--\s*not run by test\/readme\.test\.ts:(.*?)-->/;
const INLINE_ADMIN = /`(npm run --silent admin -- [a-z][^`]*)`/g;

export function commandsOf(markdown: string): Command[] {
  const lines = markdown.split('\n');
  const commands: (Command & { end?: number })[] = [];
  const markerBefore = (index: number): string | undefined => {
    for (let i = index - 1; i >= 0; i--) {
      if (lines[i]!.trim() === '') continue;
      return MARKER.exec(lines[i]!)?.[1];
    }
    return undefined;
  };
  let fence: { lang: string; skip?: string } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const opening = /^\s*```(\S*)/.exec(line);
    if (opening) {
      fence = fence ? undefined : { lang: opening[1]!, skip: markerBefore(i) };
      continue;
    }
    if (!fence) {
      for (const m of line.matchAll(INLINE_ADMIN)) commands.push({ line: i + 1, text: m[1]!, skip: markerBefore(i) });
      continue;
    }
    if (fence.lang !== 'sh') continue;
    const trimmed = line.trim();
    if (trimmed === '') continue;
    if (trimmed.startsWith('#')) {
      const last = commands.at(-1);
      // The output shown right after a command (no blank or other line in between).
      if (/^#\s*[{[]/.test(trimmed) && last && last.shown === undefined && last.end === i - 1) last.shown = trimmed.replace(/^#\s*/, '');
      continue;
    }
    const start = i;
    const parts = [line.trim()];
    while (/\\\s*$/.test(lines[i]!) && i + 1 < lines.length) parts.push(lines[++i]!.trim());
    commands.push({ line: start + 1, text: parts.join('\n'), skip: fence.skip, end: i });
  }
  return commands.map(({ line, text, skip, shown }) => ({
    line,
    text,
    ...(skip !== undefined && { skip }),
    ...(shown !== undefined && { shown }),
  }));
}

/** Stands for any value (a bare `…` in an array or as a value). */
const ANY = '\u0000any';
/** In an object, a bare `…`: other keys may follow. */
const REST = '\u0000rest';

/**
 * A shown output as JSON: `…` outside strings becomes ANY (as a value) or REST (where an object expects a key);
 * strings keep their `…` (any text there), `"<name>"` binds a placeholder, `"msk_…"` binds that literal.
 */
export function parseShown(shown: string): unknown {
  let out = '';
  const stack: string[] = [];
  let expectKey = false;
  for (let i = 0; i < shown.length; i++) {
    const c = shown[i]!;
    if (c === '"') {
      let j = i + 1;
      while (shown[j] !== '"') j += shown[j] === '\\' ? 2 : 1;
      out += shown.slice(i, j + 1);
      i = j;
      expectKey = false;
      continue;
    }
    if (c === '…') {
      out += stack.at(-1) === '{' && expectKey ? `${JSON.stringify(REST)}:true` : JSON.stringify(ANY);
      expectKey = false;
      continue;
    }
    if (c === '{' || c === '[') stack.push(c);
    if (c === '}' || c === ']') stack.pop();
    expectKey = (c === '{' || c === ',') && stack.at(-1) === '{';
    out += c;
  }
  return JSON.parse(out);
}

/** Where `actual` differs from the shown output; binds the placeholders it shows. */
export function matchShown(expected: unknown, actual: unknown, bindings: Map<string, string>, path = '$'): string[] {
  if (expected === ANY) return [];
  if (typeof expected === 'string') {
    if (typeof actual !== 'string') return [`${path}: ${JSON.stringify(actual)} is not a string`];
    const bindable = /^<[A-Za-z]\w*>$/.test(expected) ? expected : /^[\w-]+…$/.test(expected) ? expected : undefined;
    if (bindable && bindings.has(bindable) && bindings.get(bindable) !== actual)
      return [`${path}: ${actual} is not ${bindable} (${bindings.get(bindable)})`];
    if (bindable?.startsWith('<')) {
      bindings.set(bindable, actual);
      return [];
    }
    const pattern = new RegExp(
      `^${expected
        .split('…')
        .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('[\\s\\S]*')}$`,
    );
    if (!pattern.test(actual)) return [`${path}: ${JSON.stringify(actual)} is not ${JSON.stringify(expected)}`];
    if (bindable) bindings.set(bindable, actual);
    return [];
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${path}: not an array`];
    if (expected.length === 1 && expected[0] === ANY) return [];
    if (expected.length !== actual.length) return [`${path}: ${actual.length} items, not ${expected.length}`];
    return expected.flatMap((e, i) => matchShown(e, actual[i], bindings, `${path}[${i}]`));
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return [`${path}: not an object`];
    const shown = expected as Record<string, unknown>;
    const got = actual as Record<string, unknown>;
    const problems = Object.keys(shown)
      .filter((k) => k !== REST)
      .flatMap((k) => (k in got ? matchShown(shown[k], got[k], bindings, `${path}.${k}`) : [`${path}.${k}: missing`]));
    if (!(REST in shown))
      problems.push(
        ...Object.keys(got)
          .filter((k) => !(k in shown))
          .map((k) => `${path}.${k}: not shown (add …)`),
      );
    return problems;
  }
  return Object.is(expected, actual) ? [] : [`${path}: ${JSON.stringify(actual)} is not ${JSON.stringify(expected)}`];
}
