// The engine that runs content-rule regexes: RE2 (npm `re2-wasm`), whose matching time is linear in the length
// of the text whatever the pattern, so no pattern can hold the event loop (`(.*)*x`, `\w*\w*\w*y` and `(a+)+$`
// are harmless here). The price is RE2's syntax: no backreferences (`\1`, `\k<name>`) and no lookaround
// (`(?=`, `(?!`, `(?<=`, `(?<!`); such patterns do not compile and are refused when a rule is saved.
//
// Linear is not free: the cost also grows with the compiled program, which counted repetitions multiply
// (`.{1000}` takes about a second to compile and warm up). Patterns whose estimated expanded size is above
// MAX_EXPANDED_SIZE are refused, and the regexes of one message share a time budget (REGEX_TOTAL_BUDGET_MS).
//
// re2-wasm runs in a WebAssembly heap of a fixed 16 MiB that cannot grow: an allocation beyond it aborts the
// module, and an aborted module fails every later call. Three things keep it healthy:
//   - ownership: every compiled regex is freed when it leaves the cache, and a pattern that fails to compile is
//     freed too (re2-wasm itself leaks it; `OwnedRE2` catches its handle);
//   - a bounded cache (LRU) of compiled regexes, compiled once per pattern and flags;
//   - recovery: if the module aborts anyway (RE2 lets each regex's matching automaton grow to a few MiB, so a
//     few hostile patterns on hostile texts can fill the heap together), a fresh module is loaded, the patterns
//     of the evaluation that hit the limit are marked to run uncached from then on (compiled, run and freed
//     each time, so they never hold memory together), and the evaluation goes on.
import { createRequire } from 'node:module';
import type * as Re2Wasm from 're2-wasm';
import type { RE2 } from 're2-wasm';

export type RegexCheck = { ok: true } | { ok: false; reason: string };
/** `u` is mandatory for RE2; `i` folds case. */
type RegexFlags = 'u' | 'iu';
export type RegexSpec = { pattern: string; flags: RegexFlags };

type Wrapper = { delete(): void };
type Compiled = { re: RE2; free(): void };
type Engine = { compile(pattern: string, flags: RegexFlags): Compiled };

const nodeRequire = createRequire(import.meta.url);

/** Loads a fresh instance of re2-wasm (a new WebAssembly heap). */
function loadEngine(): Engine {
  for (const id of [nodeRequire.resolve('re2-wasm'), nodeRequire.resolve('re2-wasm/build/wasm/re2.js')]) delete nodeRequire.cache[id];
  const { RE2: Base } = nodeRequire('re2-wasm') as typeof Re2Wasm;
  // re2-wasm's constructor assigns `this.wrapper` (the native handle) and may throw afterwards without freeing
  // it; an accessor on the subclass prototype sees the assignment, so the handle can be freed either way.
  let last: Wrapper | undefined;
  class OwnedRE2 extends Base {}
  Object.defineProperty(OwnedRE2.prototype, 'wrapper', {
    configurable: true,
    set(this: object, value: Wrapper) {
      last = value;
      Object.defineProperty(this, 'wrapper', { value, writable: true, configurable: true });
    },
  });
  const take = () => {
    const w = last;
    last = undefined;
    return w;
  };
  const engine: Engine = {
    compile(pattern, flags) {
      take();
      let re: RE2;
      try {
        re = new OwnedRE2(pattern, flags);
      } catch (error) {
        freeQuietly(take());
        throw error;
      }
      const handle = take();
      if (!handle) throw new Error('re2-wasm no longer assigns `wrapper` in its constructor; regex-safety.ts must be adapted');
      return { re, free: () => freeQuietly(handle) };
    },
  };
  engine.compile('a', 'u').free(); // fails on loading, before any rule is run, if the library changed
  return engine;
}

function freeQuietly(w: Wrapper | undefined): void {
  try {
    w?.delete();
  } catch {
    // an aborted module cannot free; its whole heap goes with it
  }
}

// What an aborted WebAssembly module throws (the global is not in this project's type libraries).
const WasmRuntimeError = (globalThis as unknown as { WebAssembly: { RuntimeError: new () => Error } }).WebAssembly.RuntimeError;
const isAbort = (error: unknown) => error instanceof WasmRuntimeError;

// Loaded on the first regex (a content rule saved or evaluated), not at start-up: bench part a.
let engine: Engine | undefined;
let loads = 0;
const current = (): Engine => {
  if (!engine) {
    engine = loadEngine();
    loads++;
  }
  return engine;
};

// Compiled regexes by flags and pattern, least recently used first.
const MAX_COMPILED = 500;
const compiled = new Map<string, Compiled>();
// Patterns that RE2 does not run (rules saved before RE2 or before the size limit): not retried on every message.
const MAX_INVALID = 1000;
const invalid = new Map<string, string>();
// Patterns of evaluations that exhausted the heap: always compiled, run and freed.
const MAX_UNCACHED = 5000;
const uncached = new Set<string>();

const keyOf = (spec: RegexSpec) => `${spec.flags}/${spec.pattern}`;

/** Drops the aborted module and everything compiled in it, and loads a fresh one. */
function reset(): void {
  compiled.clear();
  engine = undefined;
  current();
}

/** For tests and diagnostics: how many times the engine was loaded, and what is cached. */
export function engineStats(): { loads: number; compiled: number; uncached: number; invalid: number } {
  return { loads, compiled: compiled.size, uncached: uncached.size, invalid: invalid.size };
}

/** Compiles within the size limit (a stored pattern saved before the limit is not handed to RE2). */
function compileBounded(spec: RegexSpec): Compiled {
  if (expandedSize(spec.pattern) > MAX_EXPANDED_SIZE) throw new SyntaxError('pattern too large');
  return current().compile(spec.pattern, spec.flags);
}

function cachedCompile(spec: RegexSpec, key: string): RE2 {
  const hit = compiled.get(key);
  if (hit) {
    compiled.delete(key);
    compiled.set(key, hit);
    return hit.re;
  }
  const fresh = compileBounded(spec);
  if (compiled.size >= MAX_COMPILED) {
    const [oldestKey, oldest] = compiled.entries().next().value!;
    compiled.delete(oldestKey);
    oldest.free();
  }
  compiled.set(key, fresh);
  return fresh.re;
}

function runOnce(spec: RegexSpec, text: string): boolean {
  const c = compileBounded(spec);
  try {
    return c.re.test(text);
  } finally {
    c.free();
  }
}

function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  if (map.size >= max) map.clear();
  map.set(key, value);
}

/**
 * Time all patterns of one evaluation may spend matching. Linear time still grows with the program and the
 * text: a pattern whose automaton keeps outgrowing RE2's cache (`[ab]*a[ab]{20}c` on a/b noise) takes a few
 * milliseconds per 1,600 characters, and an organization may have 200 rules. Once this is spent, the remaining
 * patterns are not run (undefined). Compiling a cached regex does not count: it happens once per process.
 */
const REGEX_TOTAL_BUDGET_MS = 100;

/**
 * Tests every pattern against `text`. An entry is undefined when its pattern was not run: it does not compile
 * (a rule saved before RE2 or before the size limit), the evaluation's time budget was spent, or the engine
 * failed twice.
 */
export function testRegexes(specs: RegexSpec[], text: string): Array<boolean | undefined> {
  const keys = specs.map(keyOf);
  const results: Array<boolean | undefined> = [];
  let spent = 0;
  const timed = <T>(work: () => T): T => {
    const started = performance.now();
    try {
      return work();
    } finally {
      spent += performance.now() - started;
    }
  };
  for (let k = 0; k < specs.length; k++) {
    const spec = specs[k]!;
    const key = keys[k]!;
    if (invalid.has(key) || spent >= REGEX_TOTAL_BUDGET_MS) {
      results.push(undefined);
      continue;
    }
    try {
      if (uncached.has(key)) {
        results.push(timed(() => runOnce(spec, text)));
      } else {
        const re = cachedCompile(spec, key);
        results.push(timed(() => re.test(text)));
      }
    } catch (error) {
      if (!isAbort(error)) {
        remember(invalid, key, (error as Error).message, MAX_INVALID);
        results.push(undefined);
        continue;
      }
      reset();
      if (uncached.size + keys.length > MAX_UNCACHED) uncached.clear();
      for (const other of keys) uncached.add(other);
      try {
        results.push(timed(() => runOnce(spec, text)));
      } catch (again) {
        if (isAbort(again)) reset();
        results.push(undefined);
      }
    }
  }
  return results;
}

/** Whether RE2 runs the pattern, with and without case folding; the reason names what it refuses. */
export function checkRegex(pattern: string): RegexCheck {
  const size = expandedSize(pattern);
  if (size > MAX_EXPANDED_SIZE) {
    return {
      ok: false,
      reason:
        `is too large for the regex engine: its repetitions and character classes expand to about ${size} units, ` +
        `at most ${MAX_EXPANDED_SIZE} are allowed (repeat \\p{…} classes, \`.\` and negated classes fewer times, e.g. .{0,100})`,
    };
  }
  for (const flags of ['u', 'iu'] as const) {
    const spec: RegexSpec = { pattern, flags };
    for (let attempt = 0; ; attempt++) {
      try {
        cachedCompile(spec, keyOf(spec)); // kept: the rule's first message does not compile it again
        break;
      } catch (error) {
        if (isAbort(error) && attempt === 0) {
          reset();
          continue;
        }
        if (isAbort(error)) return { ok: false, reason: 'could not be checked now; try again' };
        return { ok: false, reason: describe(error as Error) };
      }
    }
  }
  return { ok: true };
}

function describe(error: Error): string {
  const detail = error.message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '');
  return `is not a valid RE2 pattern (${detail}); backreferences and lookaround (lookahead, lookbehind) are not supported`;
}

// ---- size of the compiled program ----------------------------------------------------------------------------
//
// RE2 matches in time linear in the text, but proportional to the size of the compiled program too, and it
// expands counted repetitions: `\p{L}{100}` is a hundred copies of a class of hundreds of UTF-8 ranges, which
// makes re2-wasm abort while compiling, and `.{1000}` takes about a second to compile and warm up. So a
// pattern's expanded size is estimated before it reaches RE2: each atom has a weight (a literal 1, an ASCII
// class 2, `.`, a negated class or `\D \W \S` 10, a Unicode property class 200), multiplied by the repetition
// counts around it (`{n,m}` counts m, `{n,}` n + 1; `*`, `+`, `?` compile to one copy), summed over the
// pattern. Measured on re2-wasm 1.0.2: at this limit compiling and a first match take at most about 100 ms
// (`(?:\p{L}?){5}`), usually a few, and later matches well under a millisecond; the compiled regex is cached.
const MAX_EXPANDED_SIZE = 1000;

const W_LITERAL = 1;
const W_ASCII_CLASS = 2;
const W_WIDE_CLASS = 10;
const W_UNICODE_PROPERTY = 200;

/** The estimated expanded size of `pattern` (see above); an over-estimate where the syntax is unusual. */
export function expandedSize(pattern: string): number {
  return new SizeEstimator(pattern).total();
}

class SizeEstimator {
  private readonly src: string;
  private i = 0;

  constructor(src: string) {
    this.src = src;
  }

  total(): number {
    let size = this.alternatives();
    // An unbalanced `)` ends a parse early; RE2 refuses the pattern anyway, but count the rest.
    while (this.i < this.src.length) {
      this.i++;
      size += this.alternatives();
    }
    return size;
  }

  private alternatives(): number {
    let size = this.sequence();
    while (this.src[this.i] === '|') {
      this.i++;
      size += this.sequence();
    }
    return size;
  }

  private sequence(): number {
    let size = 0;
    while (this.i < this.src.length && this.src[this.i] !== '|' && this.src[this.i] !== ')') {
      const atom = this.atom();
      size += atom * this.repetition();
    }
    return size;
  }

  private atom(): number {
    const c = this.src[this.i]!;
    if (c === '(') {
      this.i++;
      this.skipGroupPrefix();
      const size = this.alternatives();
      if (this.src[this.i] === ')') this.i++;
      return Math.max(size, W_LITERAL);
    }
    if (c === '[') return this.characterClass();
    if (c === '\\') return this.escape();
    this.i++;
    return c === '.' ? W_WIDE_CLASS : W_LITERAL;
  }

  /** `(?:`, `(?=`, `(?!`, `(?<=`, `(?<!`, `(?<name>`, `(?P<name>`, and flag groups such as `(?i:`. */
  private skipGroupPrefix(): void {
    if (this.src[this.i] !== '?') return;
    this.i++;
    const c = this.src[this.i];
    if (c === ':' || c === '=' || c === '!') {
      this.i++;
    } else if (c === '<' || c === 'P') {
      if (c === 'P') this.i++;
      this.i++;
      if (this.src[this.i] === '=' || this.src[this.i] === '!') this.i++;
      else this.i = this.after('>');
    } else {
      while (this.i < this.src.length && /[a-zA-Z-]/.test(this.src[this.i]!)) this.i++;
      if (this.src[this.i] === ':') this.i++;
    }
  }

  private characterClass(): number {
    this.i++; // '['
    let weight = W_ASCII_CLASS;
    if (this.src[this.i] === '^') {
      weight = W_WIDE_CLASS;
      this.i++;
    }
    let first = true;
    while (this.i < this.src.length && (this.src[this.i] !== ']' || first)) {
      first = false;
      const c = this.src[this.i]!;
      if (c === '\\') {
        weight = Math.max(weight, this.escape());
        continue;
      }
      if (c === '[' && this.src[this.i + 1] === ':') {
        this.i = this.after(':]');
        continue;
      }
      if (c.charCodeAt(0) > 0x7f) weight = Math.max(weight, W_WIDE_CLASS);
      this.i++;
    }
    this.i++; // ']'
    return weight;
  }

  private escape(): number {
    const next = this.src[this.i + 1] ?? '';
    this.i += 2;
    switch (next) {
      case 'p':
      case 'P':
        if (this.src[this.i] === '{') this.i = this.after('}');
        else this.i++;
        return W_UNICODE_PROPERTY;
      case 'd':
      case 'w':
      case 's':
        return W_ASCII_CLASS;
      case 'D':
      case 'W':
      case 'S':
      case 'C':
        return W_WIDE_CLASS;
      case 'x':
      case 'u':
        if (this.src[this.i] === '{') this.i = this.after('}');
        else while (/[0-9a-fA-F]/.test(this.src[this.i] ?? '') && this.i < this.src.length) this.i++;
        return W_LITERAL;
      case 'Q': {
        const end = this.src.indexOf('\\E', this.i);
        const stop = end === -1 ? this.src.length : end;
        const size = Math.max(stop - this.i, 1);
        this.i = end === -1 ? stop : end + 2;
        return size;
      }
      default:
        return W_LITERAL;
    }
  }

  /** The number of copies a repetition compiles to (1 when the atom is not repeated). */
  private repetition(): number {
    let copies = 1;
    for (;;) {
      const c = this.src[this.i];
      if (c === '*' || c === '+' || c === '?') {
        this.i++;
      } else if (c === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i, this.i + 24));
        if (!m) return copies; // a literal `{`
        const min = Number(m[1]);
        copies *= Math.max(1, m[2] === undefined ? min : m[3] === '' ? min + 1 : Number(m[3]));
        this.i += m[0].length;
      } else {
        return copies;
      }
      if (this.src[this.i] === '?' || this.src[this.i] === '+') this.i++; // lazy (possessive: RE2 refuses it)
    }
  }

  /** The index after the next `token`, or the end of the pattern. */
  private after(token: string): number {
    const at = this.src.indexOf(token, this.i);
    return at === -1 ? this.src.length : at + token.length;
  }
}
