// npm run spec:diff -- <git-ref> [--root <dir>] [--spec <file>] [--changelog <file>]
// Compares the API document at <git-ref> with the working tree's and classifies the changes (scripts/spec-diff/).
// Exit 0: no unacknowledged breaking change, or nothing to compare against (ref or its openapi.yaml missing).
// Exit 1: a breaking change not acknowledged in CHANGELOG.md "## Unreleased". Exit 2: usage or load error.
//
// Why not @useoptic/optic (evaluated at 1.0.9): it installs from the npm registry alone and runs offline, but
// - it drags in 514 packages including Sentry and Segment telemetry;
// - its strict validation rejects this spec (allOf branches holding if/then) and only `--validation loose` runs;
// - its rules contradict our versioning policy: it flags *adding* a response enum value as breaking and does not
//   flag *removing* one; it has no rule for new security scopes, tightened request bounds/patterns, or webhook
//   payloads (`webhooks` is not diffed), and no changelog acknowledgement.
// So this is a small own differ; the old revision is read with `git show <ref>:<file>` for each file that the
// $refs reach, so no checkout or temp directory is needed.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadDereferenced } from './spec-diff/deref.ts';
import { diffSpecs } from './spec-diff/diff.ts';
import { parseAcknowledgements } from './spec-diff/changelog.ts';
import { renderReport } from './spec-diff/report.ts';

const USAGE = 'usage: node scripts/spec-diff.ts <git-ref> [--root <dir>] [--spec openapi.yaml] [--changelog CHANGELOG.md]';

function git(root: string, args: string[]): string {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
}

function gitOk(root: string, args: string[]): boolean {
  try {
    git(root, args);
    return true;
  } catch {
    return false;
  }
}

function main(argv: string[]): number {
  let args;
  try {
    args = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        root: { type: 'string', default: process.cwd() },
        spec: { type: 'string', default: 'openapi.yaml' },
        changelog: { type: 'string', default: 'CHANGELOG.md' },
      },
    });
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const [ref] = args.positionals;
  if (!ref || args.positionals.length > 1) {
    console.error(USAGE);
    return 2;
  }
  const root = path.resolve(args.values.root);
  const spec = args.values.spec;

  if (!gitOk(root, ['rev-parse', '--is-inside-work-tree'])) {
    console.error(`spec-diff: ${root} is not inside a git work tree`);
    return 2;
  }
  let commit: string;
  try {
    commit = git(root, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]).trim();
  } catch {
    console.log(`spec-diff: git ref "${ref}" does not exist here (e.g. no earlier commit); nothing to compare against.`);
    return 0;
  }
  // Paths inside the commit are relative to the repository top, root may be a subdirectory of it.
  const prefix = git(root, ['rev-parse', '--show-prefix']).trim();
  const inCommit = (absPath: string): string => {
    const rel = path.posix.normalize(prefix + path.relative(root, absPath).split(path.sep).join('/'));
    if (rel.startsWith('../')) throw new Error(`${absPath} is outside the repository`);
    return rel;
  };
  const rootSpec = path.resolve(root, spec);
  if (!gitOk(root, ['cat-file', '-e', `${commit}:${inCommit(rootSpec)}`])) {
    console.log(`spec-diff: ${ref} has no ${inCommit(rootSpec)}; nothing to compare against.`);
    return 0;
  }

  let before: unknown;
  let after: unknown;
  try {
    before = loadDereferenced(rootSpec, (file) => git(root, ['show', `${commit}:${inCommit(file)}`]));
  } catch (err) {
    console.error(`spec-diff: cannot load the document at ${ref}: ${(err as Error).message}`);
    return 2;
  }
  try {
    after = loadDereferenced(rootSpec, (file) => readFileSync(file, 'utf8'));
  } catch (err) {
    console.error(`spec-diff: cannot load the working tree's document: ${(err as Error).message}`);
    return 2;
  }

  const changelogPath = path.resolve(root, args.values.changelog);
  const acks = existsSync(changelogPath) ? parseAcknowledgements(readFileSync(changelogPath, 'utf8')) : [];
  const changes = diffSpecs(before, after);
  console.log(`spec-diff: ${ref} (${commit.slice(0, 12)}) -> working tree, ${spec}`);
  const report = renderReport(changes, acks, path.relative(root, changelogPath) || args.values.changelog);
  for (const line of report.lines) console.log(line);
  return report.exitCode;
}

process.exitCode = main(process.argv.slice(2));
