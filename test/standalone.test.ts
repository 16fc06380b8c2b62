// The repository stands alone: a user's clone has nothing next to it, so no file under package.json, src/,
// scripts/, test/ or bench/ may refer to a path outside the repository (for example the specification's sibling
// checkout, once read by `npm run spec:check` and this suite; its endpoint list is vendored in test/fixtures/).
// Every git-tracked file there (and every new, not ignored one) is scanned for:
// - the specification's sibling checkout by name (`<up>/shared`, however many levels up);
// - a relative path (`../x`, `./a/../../x`) that, resolved from the file's own directory, leaves the repository;
// - path.join/resolve from the file's directory (`import.meta.dirname`, `__dirname`, `here`) or the working
//   directory (`process.cwd()`, the project root when npm runs a script) with literal segments that leave it;
// - an absolute path into the directory that holds this checkout (machine-specific, absent on a clone).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const SCANNED = ['package.json', 'src', 'scripts', 'test', 'bench'];

const FILE_BASES =
  /^(?:import\.meta\.dirname|__dirname|here|dirname\(fileURLToPath\(import\.meta\.url\)\)|path\.dirname\(fileURLToPath\(import\.meta\.url\)\))$/;
const CWD_BASES = /^(?:process\.cwd\(\)|'\.'|"\.")$/;
const DD = '..';
const UP = DD + '/'; // spelled apart so that this file does not match its own scanner

/**
 * The references to paths outside `root` in `text`, the content of the repository file `file` (relative to
 * `root`, `/`-separated). Each finding is `<file>:<line>: <what>`.
 */
export function findOutsideReferences(file: string, text: string, root: string): string[] {
  const findings: string[] = [];
  const lineOf = (index: number) => text.slice(0, index).split('\n').length;
  const fileDir = path.posix.dirname(path.posix.join(root, file));
  const outside = (abs: string) => abs !== root && !abs.startsWith(`${root}/`);
  const add = (index: number, what: string) => findings.push(`${file}:${lineOf(index)}: ${what}`);

  // The sibling checkout by name, whatever the depth.
  for (const m of text.matchAll(/(?:\.\.[/\\])+shared(?![\w-])/g)) add(m.index, `refers to ${m[0]} (outside the repository)`);

  // Relative paths, resolved from the file's directory.
  for (const m of text.matchAll(/(?<![\w.\/@$-])((?:\.\/)?(?:\.\.\/)+[\w.@+~\-\/]*)/g)) {
    const token = m[1]!;
    if (/(?:\.\.[/\\])+shared(?![\w-])/.test(token)) continue; // already reported
    const abs = path.posix.resolve(fileDir, token);
    if (outside(abs)) add(m.index, `relative path ${token} resolves to ${abs}, outside the repository`);
  }

  // path.join / path.resolve with literal segments from a known base.
  const call =
    /\b(?:path\.)?(?:join|resolve)\(\s*((?:[\w.$]+(?:\((?:[^()]|\([^()]*\))*\))?)|'\.'|"\.")\s*,\s*((?:'[^'\n]*'|"[^"\n]*")(?:\s*,\s*(?:'[^'\n]*'|"[^"\n]*"))*)\s*\)/g;
  for (const m of text.matchAll(call)) {
    const base = m[1]!.trim();
    const from = FILE_BASES.test(base) ? fileDir : CWD_BASES.test(base) ? root : undefined;
    if (!from) continue;
    const segments = [...m[2]!.matchAll(/'([^'\n]*)'|"([^"\n]*)"/g)].map((s) => s[1] ?? s[2] ?? '');
    const abs = path.posix.resolve(from, ...segments);
    if (outside(abs)) add(m.index, `${m[0]} resolves to ${abs}, outside the repository`);
  }

  // Absolute paths into the directory that holds the checkout (a sibling of it, or the parent itself).
  const parent = path.posix.dirname(root);
  if (parent !== '/') {
    const escaped = parent.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const name = path.posix.basename(root).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    for (const m of text.matchAll(new RegExp(`${escaped}(?=[/'"\`\\s]|$)(?!/${name}(?:[/'"\`\\s]|$))`, 'gm'))) {
      add(m.index, `absolute path ${parent}… outside the repository`);
    }
  }
  return findings;
}

function scannedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...SCANNED], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return [...new Set(out.split('\0').filter(Boolean))].filter(
    (f) => existsSync(path.join(ROOT, f)) && statSync(path.join(ROOT, f)).isFile(),
  );
}

describe('the repository stands alone', () => {
  it('finds deliberate violations in an in-memory sample (the scanner can fail)', () => {
    const sample = [
      `const tsv = readFileSync(new URL('${UP}${UP}shared/spec/endpoints.tsv', import.meta.url), 'utf8');`,
      `"spec:check": "node ${UP}shared/tools/spec-coverage.mjs openapi.yaml",`,
      `import { x } from '${UP}${UP}${UP}elsewhere/x.ts';`,
      `const tsv = join(here, '${DD}', '${DD}', 'spec', 'endpoints.tsv');`,
      `const cfg = path.resolve(process.cwd(), '${DD}', 'config.json');`,
      `const abs = '${path.posix.dirname(ROOT)}/other-checkout/file.txt';`,
    ].join('\n');
    const findings = findOutsideReferences('scripts/sample.ts', sample, ROOT);
    expect(findings.filter((f) => f.includes(':1:')).length, findings.join('\n')).toBeGreaterThan(0);
    expect(findings.some((f) => f.startsWith(`scripts/sample.ts:2: refers to ${UP}shared`))).toBe(true);
    expect(findings.some((f) => f.startsWith('scripts/sample.ts:3: relative path'))).toBe(true);
    expect(findings.some((f) => f.startsWith('scripts/sample.ts:4: join(here'))).toBe(true);
    expect(findings.some((f) => f.startsWith('scripts/sample.ts:5: path.resolve(process.cwd()'))).toBe(true);
    expect(findings.some((f) => f.startsWith('scripts/sample.ts:6: absolute path'))).toBe(true);
  });

  it('accepts paths that stay inside the repository', () => {
    const sample = [
      `export const documentPath = fileURLToPath(new URL('${UP}${UP}generated/openapi.json', import.meta.url));`,
      `import { tenant } from '${UP}db/tenant.ts';`,
      `const tsv = readFileSync(new URL('${UP}test/fixtures/endpoints.tsv', import.meta.url), 'utf8');`,
      `const data = join(dirname(packageMain), '${DD}', 'resources', 'timezones.bson'); // another package's files`,
      `const changelog = path.resolve(import.meta.dirname, '${UP}CHANGELOG.md');`,
      `if (rel.startsWith('${UP}')) throw new Error('outside');`,
      `const abs = '${ROOT}/generated/openapi.json';`,
    ].join('\n');
    expect(findOutsideReferences('src/http/sample.ts', sample, ROOT)).toEqual([]);
  });

  it('has no file under package.json, src/, scripts/, test/ or bench/ that refers outside the repository', () => {
    const files = scannedFiles();
    expect(files).toContain('package.json');
    expect(files).toContain('test/fixtures/endpoints.tsv');
    const findings: string[] = [];
    for (const file of files) {
      const buffer = readFileSync(path.join(ROOT, file));
      if (buffer.includes(0)) continue; // binary
      findings.push(...findOutsideReferences(file, buffer.toString('utf8'), ROOT));
    }
    expect(findings).toEqual([]);
  });

  it('vendors the specification endpoint list: 194 operations with a header row', () => {
    const lines = readFileSync(path.join(ROOT, 'test/fixtures/endpoints.tsv'), 'utf8').trim().split('\n');
    expect(lines[0]).toBe('section\tmethod\tpath');
    expect(lines.slice(1)).toHaveLength(194);
  });
});
