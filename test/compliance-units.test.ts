// Compliance building blocks tested directly: content-rule patterns (RE2) and matching, quiet-hours arithmetic,
// CSV escaping and report date ranges.
import { describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { checkRegex, engineStats, expandedSize, testRegexes } from '../src/domain/compliance/regex-safety.ts';
import { checkContentPattern, matchContentRules, type ContentRuleSpec } from '../src/domain/compliance/content-rules.ts';
import { instantOfLocal, isQuietAt, quietHoursHoldUntil } from '../src/domain/compliance/quiet-hours.ts';
import { csvField, toCsv } from '../src/lib/csv.ts';
import { reportRange } from '../src/domain/compliance/reports.ts';

describe('checkRegex (RE2)', () => {
  const refused: Array<[string, RegExp]> = [
    ['(a)\\1', /RE2.*invalid escape sequence: \\1/], // backreference
    ['(?<q>["\'])x\\k<q>', /RE2/], // named backreference
    ['(?=a)b', /RE2.*lookaround/], // lookahead
    ['(?<!\\d)\\d{10}', /RE2/], // lookbehind
    ['(', /missing \)/],
    ['[a-', /missing \]/],
    ['a{2,1}', /invalid repetition size/],
    ['a{1001}', /too large/],
    // Programs too large to compile quickly, or at all, in re2-wasm's fixed heap (\p{L}{100} aborts it).
    ['\\p{L}{100}', /too large.*20000 units/],
    ['[\\p{L}\\p{N}]{10}', /too large/],
    ['.{1000}', /too large/],
    ['[\\s\\S]{500}', /too large/],
    ['(?:\\S+\\s+){1,90}', /too large/],
    ['(?:(?:a{10}){10}){11}', /too large/],
  ];
  for (const [pattern, reason] of refused) {
    it(`refuses ${pattern}`, () => {
      const check = checkRegex(pattern);
      expect(check.ok).toBe(false);
      expect(!check.ok && check.reason).toMatch(reason);
    });
  }

  // The shapes the backtracking engine had to refuse or time-box run in linear time on RE2.
  const accepted = [
    '(a+)+$',
    '(a|a)*',
    '(.*a){20}',
    '([a-z]+)*@',
    '(\\w*)*',
    '(a|aa)+',
    '(.*)*x',
    '\\w*\\w*\\w*y',
    '\\s*\\s*\\s*\\s*\\s*\\s*x',
    '\\b(cbd|thc|cannabis)\\b',
    'payday\\s+loan',
    '[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}',
    '\\d{3}-\\d{4}',
    '(cbd|thc)?',
    '(?:ab)*',
    '(ab){3}',
    '[(]+\\)+',
    '^free (money|cash)!$',
    '(?<year>\\d{4})-(?<month>\\d{2})',
    'café',
    '\\p{L}+',
    '\\p{L}{5}',
    '.{0,100}',
    '\\w{500}',
    'x{',
  ];
  for (const pattern of accepted) {
    it(`accepts ${pattern}`, () => expect(checkRegex(pattern)).toEqual({ ok: true }));
  }

  it('refuses a blank keyword pattern but accepts any phrase', () => {
    expect(checkContentPattern('   ', 'keyword').ok).toBe(false);
    expect(checkContentPattern('(a+)+', 'keyword').ok).toBe(true); // a keyword is literal text
    expect(checkContentPattern('(?=x)', 'keyword').ok).toBe(true);
  });

  it('frees what it compiles: refused patterns and evicted regexes do not pile up in the engine heap', () => {
    // re2-wasm's heap is a fixed 16 MiB; re2-wasm itself keeps a refused pattern allocated in it, and the cache
    // frees what it evicts. (Tens of thousands of refusals, which used to abort the module, are too slow here.)
    const before = engineStats().loads;
    for (let i = 0; i < 300; i++) expect(checkRegex(`(?<=a)b${i}${'x'.repeat(400)}`).ok).toBe(false);
    for (let i = 0; i < 300; i++) expect(checkRegex(`(?:cbd|thc|x${i})\\w*(?:lorem|y${i})`).ok).toBe(true); // 600 compiled
    expect(engineStats().compiled).toBeLessThanOrEqual(500);
    expect(testRegexes([{ pattern: 'b(c)', flags: 'u' }], 'abc')).toEqual([true]);
    expect(engineStats().loads).toBe(before); // never aborted, never reloaded
  });

  it('estimates the expanded size of a pattern', () => {
    expect(expandedSize('abc')).toBe(3);
    expect(expandedSize('a{10}')).toBe(10);
    expect(expandedSize('(?:ab){3,5}')).toBe(10);
    expect(expandedSize('a{3,}')).toBe(4);
    expect(expandedSize('(?:a|bc)*')).toBe(3);
    expect(expandedSize('\\d{3}-\\d{4}')).toBe(15);
    expect(expandedSize('.{10}')).toBe(100);
    expect(expandedSize('[^a]{10}')).toBe(100);
    expect(expandedSize('[a-z\\p{L}]{2}')).toBe(400);
    expect(expandedSize('(?<y>\\d{4})')).toBe(8);
    expect(expandedSize('x{')).toBe(2);
  });
});

describe('matchContentRules', () => {
  const rule = (over: Partial<ContentRuleSpec>): ContentRuleSpec => ({
    id: over.name ?? 'r',
    name: 'r',
    pattern: 'x',
    patternType: 'keyword',
    action: 'block',
    caseSensitive: false,
    ...over,
  });
  const cases: Array<[string, Partial<ContentRuleSpec>, string, boolean]> = [
    ['keyword, whole word', { pattern: 'loan' }, 'Get a LOAN today', true],
    ['keyword inside a word', { pattern: 'loan' }, 'loans and payloans', false],
    ['phrase over any whitespace', { pattern: 'payday loan' }, 'a payday\n  loan!', true],
    ['unicode word boundary', { pattern: 'café' }, 'cafés', false],
    ['unicode match, case folded', { pattern: 'café' }, 'Le CAFÉ.', true],
    ['case-sensitive keyword', { pattern: 'CBD', caseSensitive: true }, 'cbd oil', false],
    ['keyword with regex characters is literal', { pattern: 'a+b (c)' }, 'x a+b (c) y', true],
    ['keyword with regex characters does not act as regex', { pattern: 'a+b' }, 'aab', false],
    ['regex anywhere, i flag', { pattern: '\\b(cbd|thc)\\b', patternType: 'regex' }, 'Try THC now', true],
    ['regex case-sensitive', { pattern: 'THC', patternType: 'regex', caseSensitive: true }, 'thc', false],
    ['regex no match', { pattern: '\\d{3}-\\d{4}', patternType: 'regex' }, 'call 555 0188', false],
    ['regex, unicode case folding', { pattern: 'café', patternType: 'regex' }, 'LE CAFÉ', true],
    ['regex, named group', { pattern: '(?<d>\\d{3})-\\d{4}', patternType: 'regex' }, 'call 555-0188', true],
    ['regex with a slash', { pattern: 'a/b', patternType: 'regex' }, 'x a/b y', true],
  ];
  for (const [name, spec, text, matches] of cases) {
    it(`${name}: ${matches ? 'matches' : 'does not match'}`, () => {
      expect(matchContentRules([rule({ name, ...spec })], text).length).toBe(matches ? 1 : 0);
    });
  }

  it('answers polynomial patterns on long texts correctly (linear-time engine)', () => {
    const star = rule({ name: 'star', pattern: '(.*)*x', patternType: 'regex' });
    const words = rule({ name: 'words', pattern: '\\w*\\w*\\w*y', patternType: 'regex' });
    const spaces = rule({ name: 'spaces', pattern: '\\s*\\s*\\s*\\s*\\s*\\s*x', patternType: 'regex' });
    const names = (text: string) => matchContentRules([star, words, spaces], text).map((m) => [m.rule.name, m.timedOut]);
    expect(names('a'.repeat(1600))).toEqual([]);
    expect(names(`${'a'.repeat(1599)}y`)).toEqual([['words', false]]);
    expect(names(`${' '.repeat(1599)}x`)).toEqual([
      ['star', false],
      ['spaces', false],
    ]);
  });

  it('keeps the order of the rules and answers every rule', () => {
    const rules = [
      rule({ name: 'a', pattern: 'a', patternType: 'regex' }),
      rule({ name: 'kw', pattern: 'c' }),
      rule({ name: 'b', pattern: 'b', patternType: 'regex' }),
      rule({ name: 'c', pattern: 'c', patternType: 'regex' }),
    ];
    expect(matchContentRules(rules, 'a c').map((m) => m.rule.name)).toEqual(['a', 'kw', 'c']);
  });

  it('counts a stored pattern that RE2 cannot run (saved before RE2) as matched, and still runs the others', () => {
    const legacy = rule({ name: 'legacy', pattern: '(?<!\\d)\\d{10}(?!\\d)', patternType: 'regex' });
    const fast = rule({ name: 'fast', pattern: 'needle', patternType: 'regex' });
    const other = rule({ name: 'other', pattern: 'absent', patternType: 'regex' });
    for (let i = 0; i < 2; i++) {
      expect(matchContentRules([legacy, fast, other], 'a needle').map((m) => [m.rule.name, m.timedOut])).toEqual([
        ['legacy', true],
        ['fast', false],
      ]);
    }
  });

  // Patterns that make RE2 build a large automaton on a/b noise: milliseconds per text, and together more than
  // re2-wasm's fixed 16 MiB heap (which aborts the module).
  let seed = 1;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const noise = () => Array.from({ length: 1600 }, () => (random() < 0.5 ? 'a' : 'b')).join('');
  const heavy = Array.from({ length: 40 }, (_, k) =>
    rule({ name: `heavy${k}`, pattern: `[ab]*a[ab]{${20 + (k % 3)}}c${k}`, patternType: 'regex' }),
  );
  const marker = rule({ name: 'marker', pattern: 'ab{3}a', patternType: 'regex' });
  const outcome = (rules: ContentRuleSpec[], text: string) => new Map(matchContentRules(rules, text).map((m) => [m.rule.name, m.timedOut]));

  it('stops running regexes when the time budget of the message is spent, and counts the rest as matched', () => {
    const text = noise();
    const result = outcome([marker, ...heavy], text);
    expect(result.get('marker')).toBe(/ab{3}a/.test(text) ? false : undefined); // answered before the budget ran out
    const unchecked = heavy.filter((r) => result.get(r.name) === true);
    expect(unchecked.length).toBeGreaterThan(0);
    for (const r of heavy) expect(result.get(r.name) ?? true).toBe(true); // none can match: unchecked, or absent
  });

  it('survives automata that together outgrow the engine heap, and keeps answering correctly', () => {
    const before = engineStats().loads;
    for (let t = 0; t < 4; t++) {
      const text = noise();
      for (let k = 0; k < heavy.length; k += 4) {
        const result = outcome([marker, ...heavy.slice(k, k + 4)], text); // small groups: within the budget
        expect(result.get('marker')).toBe(/ab{3}a/.test(text) ? false : undefined);
        for (const r of heavy) expect(result.get(r.name) ?? true).toBe(true);
      }
    }
    expect(engineStats().loads).toBeGreaterThan(before); // the heap did run out, and the engine was reloaded
    expect(engineStats().uncached).toBeGreaterThan(0); // the patterns of that evaluation now run uncached
    expect(outcome([rule({ name: 'after', pattern: '\\bok\\b', patternType: 'regex' })], 'all ok')).toEqual(new Map([['after', false]]));
  });
});

describe('quiet hours', () => {
  const at = (iso: string) => new Date(iso);
  // [zones, now, start, end, expected hold-until (null = not quiet)]
  const cases: Array<[string, string[], string, string, string, string | null]> = [
    ['New York afternoon', ['America/New_York'], '2026-06-10T18:00:00Z', '21:00', '08:00', null],
    ['New York 21:00 sharp starts quiet', ['America/New_York'], '2026-06-11T01:00:00Z', '21:00', '08:00', '2026-06-11T12:00:00.000Z'],
    ['New York 20:59 still allowed', ['America/New_York'], '2026-06-11T00:59:00Z', '21:00', '08:00', null],
    ['after midnight (wrap)', ['America/New_York'], '2026-06-11T05:30:00Z', '21:00', '08:00', '2026-06-11T12:00:00.000Z'],
    ['08:00 sharp ends quiet', ['America/New_York'], '2026-06-11T12:00:00Z', '21:00', '08:00', null],
    ['winter offset', ['America/New_York'], '2026-01-15T03:00:00Z', '21:00', '08:00', '2026-01-15T13:00:00.000Z'],
    // 2026-03-08: clocks spring forward at 02:00; the night starts in EST and ends in EDT.
    ['DST spring forward night', ['America/New_York'], '2026-03-08T03:00:00Z', '21:00', '08:00', '2026-03-08T12:00:00.000Z'],
    // 2026-11-01: clocks fall back at 02:00; 08:00 EST is 13:00Z.
    ['DST fall back night', ['America/New_York'], '2026-11-01T04:00:00Z', '21:00', '08:00', '2026-11-01T13:00:00.000Z'],
    ['widened quiet hours', ['Europe/Paris'], '2026-06-10T18:30:00Z', '20:00', '09:00', '2026-06-11T07:00:00.000Z'],
    ['UTC', ['UTC'], '2026-06-10T22:00:00Z', '21:00', '08:00', '2026-06-11T08:00:00.000Z'],
    // 04:30Z: 00:30 EDT and 21:30 PDT, quiet in both; Los Angeles wakes last (08:00 PDT = 15:00Z).
    [
      'several zones: the last one to wake',
      ['America/New_York', 'America/Los_Angeles'],
      '2026-06-11T04:30:00Z',
      '21:00',
      '08:00',
      '2026-06-11T15:00:00.000Z',
    ],
    // 01:30Z = 21:30 EDT (quiet) but 18:30 PDT (allowed): quiet in one zone is enough to hold.
    [
      'quiet in one of several zones',
      ['America/New_York', 'America/Los_Angeles'],
      '2026-06-11T01:30:00Z',
      '21:00',
      '08:00',
      '2026-06-11T15:00:00.000Z',
    ],
    // 13:00Z: 09:00 EDT allowed, 06:00 PDT quiet → wait for LA's 08:00 (15:00Z), New York is still allowed then.
    [
      'morning: east awake, west asleep',
      ['America/New_York', 'America/Los_Angeles'],
      '2026-06-11T13:00:00Z',
      '21:00',
      '08:00',
      '2026-06-11T15:00:00.000Z',
    ],
  ];
  for (const [name, zones, now, start, end, expected] of cases) {
    it(name, () => {
      const until = quietHoursHoldUntil(zones, at(now), start, end);
      expect(until?.toISOString() ?? null).toBe(expected);
    });
  }

  it('finds the common window of zones far apart (toll-free numbers span Guam to Pago Pago)', () => {
    const zones = ['Pacific/Guam', 'Pacific/Pago_Pago', 'America/New_York', 'America/St_Johns'];
    const until = quietHoursHoldUntil(zones, at('2026-01-15T12:00:00Z'), '21:00', '08:00')!;
    expect(until).not.toBeNull();
    for (const z of zones) expect(isQuietAt(z, until, '21:00', '08:00')).toBe(false);
    expect(until.toISOString()).toBe('2026-01-15T22:00:00.000Z'); // 08:00 in Guam; 23:00 the day before in Pago Pago
  });

  it('resolves local times across DST changes', () => {
    expect(instantOfLocal('America/New_York', 2026, 3, 8, 8 * 60).toISOString()).toBe('2026-03-08T12:00:00.000Z');
    expect(instantOfLocal('America/New_York', 2026, 3, 7, 8 * 60).toISOString()).toBe('2026-03-07T13:00:00.000Z');
    expect(instantOfLocal('America/New_York', 2026, 3, 8, 2 * 60 + 30).toISOString()).toBe('2026-03-08T07:30:00.000Z'); // skipped → 03:30 EDT
    expect(instantOfLocal('America/New_York', 2026, 11, 1, 60 + 30).toISOString()).toBe('2026-11-01T05:30:00.000Z'); // first 01:30
    expect(instantOfLocal('Europe/Paris', 2026, 3, 29, 60 + 30).toISOString()).toBe('2026-03-29T00:30:00.000Z');
    expect(instantOfLocal('Asia/Kolkata', 2026, 6, 1, 8 * 60).toISOString()).toBe('2026-06-01T02:30:00.000Z');
  });
});

describe('CSV', () => {
  it('quotes only what needs quoting and round-trips through a CSV parser', () => {
    const rows = [
      { a: 'plain', b: null, c: 'with, comma' },
      { a: 'say "hi"', b: 'line\nbreak', c: '+14155550123' },
      { a: 'crlf\r\nx', b: ' padded ', c: '' },
    ];
    const text = toCsv(['a', 'b', 'c'], rows);
    expect(text.split('\r\n')[0]).toBe('a,b,c');
    expect(csvField('plain')).toBe('plain');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField(null)).toBe('');
    const parsed = parse(text, { columns: true }) as Array<Record<string, string>>;
    expect(parsed).toEqual(rows.map((r) => ({ a: r.a, b: r.b ?? '', c: r.c })));
  });
});

describe('reportRange', () => {
  const now = new Date('2026-11-21T15:00:00Z');
  it('defaults to the 30 days before today, inclusive', () => {
    const r = reportRange({}, now);
    expect(r).toMatchObject({ ok: true, range: { startDate: '2026-10-22', endDate: '2026-11-21' } });
    if (r.ok)
      expect([r.range.from.toISOString(), r.range.to.toISOString()]).toEqual(['2026-10-22T00:00:00.000Z', '2026-11-22T00:00:00.000Z']);
  });
  it('accepts 366 days and refuses 367, and a start after the end', () => {
    expect(reportRange({ startDate: '2025-01-01', endDate: '2026-01-01' }, now).ok).toBe(true);
    expect(reportRange({ startDate: '2025-01-01', endDate: '2026-01-02' }, now)).toMatchObject({ ok: false, field: 'query.startDate' });
    expect(reportRange({ startDate: '2026-02-02', endDate: '2026-02-01' }, now)).toMatchObject({ ok: false, field: 'query.startDate' });
  });
});
