// Static check of content-rule regexes, run when a rule is created or changed. A pattern is refused when it
// does not compile, or when it has a shape known to backtrack catastrophically in a backtracking engine like
// V8's:
//   - a group repeated by `*`, `+` or `{n,m}` / `{n,}` with m > 1 that contains a quantifier or an alternation
//     anywhere inside it: `(a+)+`, `(\w*)*`, `(a|a)*`, `(a|aa)+`, `(.*a){20}`, `([a-z]+)*@`, `((ab)?c)+`;
//   - a backreference: `\1` … `\9…`, `\k<name>`.
// `?`, `{0,1}` and `{1}` do not repeat, so `(a+)?` or `(cbd|thc)?` pass. Polynomial shapes that remain
// (`.*.*.*x`) are bounded at match time instead (content-rules.ts runs regexes under a time budget).
export type RegexCheck = { ok: true } | { ok: false; reason: string };

type Quantifier = { min: number; max: number };
type Term = { node: Node; quantifier: Quantifier | null };
type Node = { kind: 'atom' } | { kind: 'backreference' } | { kind: 'group'; alternatives: Term[][] };

export function checkRegexSafety(pattern: string, flags = ''): RegexCheck {
  try {
    new RegExp(pattern, flags);
  } catch (error) {
    return { ok: false, reason: `does not compile: ${(error as Error).message}` };
  }
  const tree = new Parser(pattern).parse();
  if (containsBackreference(tree)) return { ok: false, reason: 'backreferences (\\1, \\k<name>) are not allowed' };
  const nested = findRepeatedComplexGroup(tree);
  if (nested) {
    return {
      ok: false,
      reason: 'a repeated group contains a quantifier or an alternation, which can backtrack catastrophically; use a character class or an unrepeated group instead',
    };
  }
  return { ok: true };
}

function containsBackreference(alternatives: Term[][]): boolean {
  return alternatives.some((seq) =>
    seq.some((t) => t.node.kind === 'backreference' || (t.node.kind === 'group' && containsBackreference(t.node.alternatives))),
  );
}

function repeats(q: Quantifier | null): boolean {
  return q !== null && q.max > 1;
}

/** True when the alternatives hold a quantifier or more than one alternative anywhere. */
function isComplex(alternatives: Term[][]): boolean {
  if (alternatives.length > 1) return true;
  return alternatives.some((seq) => seq.some((t) => t.quantifier !== null || (t.node.kind === 'group' && isComplex(t.node.alternatives))));
}

function findRepeatedComplexGroup(alternatives: Term[][]): boolean {
  for (const seq of alternatives) {
    for (const t of seq) {
      if (t.node.kind !== 'group') continue;
      if (repeats(t.quantifier) && isComplex(t.node.alternatives)) return true;
      if (findRepeatedComplexGroup(t.node.alternatives)) return true;
    }
  }
  return false;
}

/** A structural parser for patterns that already compile (so it need not report syntax errors). */
class Parser {
  private readonly src: string;
  private i = 0;

  constructor(src: string) {
    this.src = src;
  }

  parse(): Term[][] {
    const alternatives = this.alternatives();
    return alternatives;
  }

  private alternatives(): Term[][] {
    const out: Term[][] = [this.sequence()];
    while (this.src[this.i] === '|') {
      this.i++;
      out.push(this.sequence());
    }
    return out;
  }

  private sequence(): Term[] {
    const terms: Term[] = [];
    while (this.i < this.src.length && this.src[this.i] !== '|' && this.src[this.i] !== ')') {
      const node = this.atom();
      terms.push({ node, quantifier: this.quantifier() });
    }
    return terms;
  }

  private atom(): Node {
    const c = this.src[this.i]!;
    if (c === '(') {
      this.i++;
      this.skipGroupPrefix();
      const alternatives = this.alternatives();
      this.i++; // ')'
      return { kind: 'group', alternatives };
    }
    if (c === '[') {
      this.skipClass();
      return { kind: 'atom' };
    }
    if (c === '\\') return this.escape();
    this.i++;
    return { kind: 'atom' };
  }

  /** `(?:`, `(?=`, `(?!`, `(?<=`, `(?<!`, `(?<name>`, and modifier groups such as `(?i:`. */
  private skipGroupPrefix(): void {
    if (this.src[this.i] !== '?') return;
    this.i++;
    const c = this.src[this.i];
    if (c === ':' || c === '=' || c === '!') {
      this.i++;
    } else if (c === '<') {
      this.i++;
      if (this.src[this.i] === '=' || this.src[this.i] === '!') this.i++;
      else this.i = this.src.indexOf('>', this.i) + 1;
    } else {
      this.i = this.src.indexOf(':', this.i) + 1;
    }
  }

  private skipClass(): void {
    this.i++; // '['
    if (this.src[this.i] === '^') this.i++;
    while (this.i < this.src.length && this.src[this.i] !== ']') {
      this.i += this.src[this.i] === '\\' ? 2 : 1;
    }
    this.i++; // ']'
  }

  private escape(): Node {
    const next = this.src[this.i + 1] ?? '';
    if (/[1-9]/.test(next)) {
      this.i += 2;
      while (/[0-9]/.test(this.src[this.i] ?? '')) this.i++;
      return { kind: 'backreference' };
    }
    if (next === 'k' && this.src[this.i + 2] === '<') {
      this.i = this.src.indexOf('>', this.i) + 1 || this.src.length;
      return { kind: 'backreference' };
    }
    this.i += 2;
    return { kind: 'atom' };
  }

  private quantifier(): Quantifier | null {
    const c = this.src[this.i];
    let q: Quantifier | null = null;
    if (c === '*') q = { min: 0, max: Infinity };
    else if (c === '+') q = { min: 1, max: Infinity };
    else if (c === '?') q = { min: 0, max: 1 };
    if (q) {
      this.i++;
    } else if (c === '{') {
      // Annex B: a `{` that is not a well-formed quantifier is a literal character.
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i));
      if (!m) return null;
      const min = Number(m[1]);
      q = { min, max: m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]) };
      this.i += m[0].length;
    } else {
      return null;
    }
    if (this.src[this.i] === '?') this.i++; // lazy
    return q;
  }
}
