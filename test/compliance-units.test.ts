// Compliance building blocks tested directly: regex safety, content-rule matching under a time budget,
// quiet-hours arithmetic, CSV escaping and report date ranges.
import { describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { checkRegexSafety } from '../src/domain/compliance/regex-safety.ts';
import { checkContentPattern, matchContentRules, testWithinBudget, type ContentRuleSpec } from '../src/domain/compliance/content-rules.ts';
import { instantOfLocal, isQuietAt, quietHoursHoldUntil } from '../src/domain/compliance/quiet-hours.ts';
import { csvField, toCsv } from '../src/domain/compliance/csv.ts';
import { reportRange } from '../src/domain/compliance/reports.ts';

describe('checkRegexSafety', () => {
  const refused: Array<[string, RegExp]> = [
    ['(a+)+$', /repeated group/],
    ['(a|a)*', /repeated group/],
    ['(.*a){20}', /repeated group/],
    ['([a-z]+)*@', /repeated group/],
    ['(\\w*)*', /repeated group/],
    ['(a|aa)+', /repeated group/],
    ['(?:x+x+)+y', /repeated group/],
    ['((ab)?c)+', /repeated group/],
    ['(?<w>\\w+\\s?)*$', /repeated group/],
    ['(a)\\1', /backreference/],
    ['(?<q>["\'])x\\k<q>', /backreference/],
    ['(', /does not compile/],
    ['[a-', /does not compile/],
    ['a{2,1}', /does not compile/],
  ];
  for (const [pattern, reason] of refused) {
    it(`refuses ${pattern}`, () => {
      const check = checkRegexSafety(pattern);
      expect(check.ok).toBe(false);
      expect(!check.ok && check.reason).toMatch(reason);
    });
  }

  const accepted = [
    '\\b(cbd|thc|cannabis)\\b',
    'payday\\s+loan',
    '[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}',
    '\\d{3}-\\d{4}',
    '(cbd|thc)?',
    '(a+)?',
    '(?:ab)*',
    '(ab){3}',
    'x{',
    '[(]+\\)+',
    '[\\]]+(x)+',
    '^free (money|cash)!$',
    '(?<year>\\d{4})-(?<month>\\d{2})',
  ];
  for (const pattern of accepted) {
    it(`accepts ${pattern}`, () => expect(checkRegexSafety(pattern)).toEqual({ ok: true }));
  }

  it('refuses a blank keyword pattern but accepts any phrase', () => {
    expect(checkContentPattern('   ', 'keyword').ok).toBe(false);
    expect(checkContentPattern('(a+)+', 'keyword').ok).toBe(true); // a keyword is literal text
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
  ];
  for (const [name, spec, text, matches] of cases) {
    it(`${name}: ${matches ? 'matches' : 'does not match'}`, () => {
      expect(matchContentRules([rule({ name, ...spec })], text).length).toBe(matches ? 1 : 0);
    });
  }

  it('stops a slow (polynomial) regex within its budget, counts it as matched, and still runs the others', () => {
    const slow = rule({ name: 'slow', pattern: '\\s*\\s*\\s*\\s*\\s*\\s*x', patternType: 'regex' });
    const fast = rule({ name: 'fast', pattern: 'needle', patternType: 'regex' });
    const other = rule({ name: 'other', pattern: 'absent', patternType: 'regex' });
    const text = `${' '.repeat(3000)}needle`;
    const matches = matchContentRules([slow, fast, other], text);
    expect(matches.map((m) => [m.rule.name, m.timedOut])).toEqual([
      ['slow', true],
      ['fast', false],
    ]);
  });

  it('answers every regex when none is slow', () => {
    expect(testWithinBudget([/a/, /b/, /c/], 'ac')).toEqual([true, false, true]);
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
    ['several zones: the last one to wake', ['America/New_York', 'America/Los_Angeles'], '2026-06-11T04:30:00Z', '21:00', '08:00', '2026-06-11T15:00:00.000Z'],
    // 01:30Z = 21:30 EDT (quiet) but 18:30 PDT (allowed): quiet in one zone is enough to hold.
    ['quiet in one of several zones', ['America/New_York', 'America/Los_Angeles'], '2026-06-11T01:30:00Z', '21:00', '08:00', '2026-06-11T15:00:00.000Z'],
    // 13:00Z: 09:00 EDT allowed, 06:00 PDT quiet → wait for LA's 08:00 (15:00Z), New York is still allowed then.
    ['morning: east awake, west asleep', ['America/New_York', 'America/Los_Angeles'], '2026-06-11T13:00:00Z', '21:00', '08:00', '2026-06-11T15:00:00.000Z'],
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
    if (r.ok) expect([r.range.from.toISOString(), r.range.to.toISOString()]).toEqual(['2026-10-22T00:00:00.000Z', '2026-11-22T00:00:00.000Z']);
  });
  it('accepts 366 days and refuses 367, and a start after the end', () => {
    expect(reportRange({ startDate: '2025-01-01', endDate: '2026-01-01' }, now).ok).toBe(true);
    expect(reportRange({ startDate: '2025-01-01', endDate: '2026-01-02' }, now)).toMatchObject({ ok: false, field: 'query.startDate' });
    expect(reportRange({ startDate: '2026-02-02', endDate: '2026-02-01' }, now)).toMatchObject({ ok: false, field: 'query.startDate' });
  });
});
