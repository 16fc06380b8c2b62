// The layers of the section template are enforced by ESLint (eslint.config.js, run by `npm run lint` in
// `npm test`); these prove the rules refuse a deliberate violation and let the allowed direction through. And the
// import graph of src/ has no circles.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { layers } from '../eslint.config.js';

const eslint = new ESLint({
  overrideConfigFile: true,
  overrideConfig: [{ files: ['**/*.ts'] }, ...layers],
  cwd: new URL('..', import.meta.url).pathname,
});

/** An import of `path` as written from two folders down (the fixtures pretend to live in src/…/…/). */
const up2 = (path: string) => `${'../'.repeat(2)}${path}`;

async function violations(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe('layer boundaries', () => {
  it('refuses a handler that imports src/db', async () => {
    expect(await violations("import { tenant } from '../db/tenant.ts';\nexport const x = tenant;\n", 'src/handlers/fixture.ts')).toEqual([
      expect.stringContaining('no-restricted-imports'),
    ]);
  });

  it('refuses src/db importing the domain or the HTTP layer', async () => {
    expect(
      await violations(`import { found } from '${up2('domain/errors.ts')}';\nexport const x = found;\n`, 'src/db/queries/fixture.ts'),
    ).toHaveLength(1);
    expect(
      await violations("import { pageOf } from '../http/pagination.ts';\nexport const x = pageOf;\n", 'src/db/fixture.ts'),
    ).toHaveLength(1);
  });

  it('refuses the domain importing the HTTP layer', async () => {
    expect(
      await violations(
        `import { pageOf } from '${up2('http/pagination.ts')}';\nexport const x = pageOf;\n`,
        'src/domain/contacts/fixture.ts',
      ),
    ).toHaveLength(1);
  });

  it('refuses the domain importing a concrete provider, and lets it use the provider interface', async () => {
    for (const concrete of [
      'providers/simulator.ts',
      'providers/simulator-registry.ts',
      'providers/twilio/adapter.ts',
      'providers/assemble.ts',
    ]) {
      expect(await violations(`import { x } from '${up2(concrete)}';\nexport const y = x;\n`, 'src/domain/submissions/fixture.ts')).toEqual(
        [expect.stringContaining('src/providers/provider.ts')],
      );
    }
    expect(
      await violations(
        `import { ProviderError } from '${up2('providers/provider.ts')}';\nexport const y = ProviderError;\n`,
        'src/domain/submissions/fixture.ts',
      ),
    ).toEqual([]);
  });

  it('refuses a provider or src/net importing the domain, the HTTP layer or a handler', async () => {
    const imports = {
      domain: `import { found } from '${up2('domain/errors.ts')}';\nexport const x = found;\n`,
      http: `import { pageOf } from '${up2('http/pagination.ts')}';\nexport const x = pageOf;\n`,
      handler: `import { x } from '${up2('handlers/contacts.ts')}';\nexport const y = x;\n`,
    };
    for (const file of ['src/providers/twilio/fixture.ts', 'src/providers/rbm/fixture.ts']) {
      for (const code of Object.values(imports)) {
        expect(await violations(code, file)).toEqual([expect.stringContaining('Providers and src/net serve the domain')]);
      }
    }
    expect(await violations("import { found } from '../domain/errors.ts';\nexport const x = found;\n", 'src/net/fixture.ts')).toEqual([
      expect.stringContaining('Providers and src/net serve the domain'),
    ]);
    // What they may use: src/lib, and each other.
    expect(
      await violations(`import { x } from '${up2('net/guarded-fetch.ts')}';\nexport const y = x;\n`, 'src/providers/rbm/fixture.ts'),
    ).toEqual([]);
  });

  it('lets handlers call the domain and the domain reach queries', async () => {
    expect(
      await violations("import { listKeys } from '../domain/api-keys/keys.ts';\nexport const x = listKeys;\n", 'src/handlers/fixture.ts'),
    ).toEqual([]);
    expect(
      await violations(
        `import { listApiKeys } from '${up2('db/queries/api-keys/api-keys.ts')}';\nexport const x = listApiKeys;\n`,
        'src/domain/api-keys/fixture.ts',
      ),
    ).toEqual([]);
  });
});

// The import graph of src/: every import and re-export, type-only ones included (a type import still ties the
// modules' meaning together, and turns into a runtime import with one edit), each relative specifier resolved to its
// file. Circles are refused: a module in one cannot be read, loaded or tested without the others.
const SRC = resolve(new URL('../src', import.meta.url).pathname);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.(ts|js|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The module specifiers of a file: import/export declarations, `import('…')` calls and `import('…')` types. */
function specifiersOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
      found.push(node.moduleSpecifier.text);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && ts.isStringLiteral(node.arguments[0]!))
      found.push((node.arguments[0] as ts.StringLiteral).text);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal))
      found.push(node.argument.literal.text);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      found.push((node.moduleReference.expression as ts.StringLiteral).text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** file → the files of `root` it imports; a relative specifier that names no file is an error. */
function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(root)) {
    const targets = specifiersOf(file)
      .filter((s) => s.startsWith('.'))
      .map((s) => {
        const target = resolve(dirname(file), s);
        if (!existsSync(target)) throw new Error(`${relative(root, file)} imports ${s}, which is no file`);
        return target;
      })
      .filter((target) => target.startsWith(`${root}/`));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** One circle per strongly connected component of more than one module (or a module importing itself), shortest first found. */
function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(component);
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  // A concrete circle in each: the shortest way back to its first module (breadth first, inside the component).
  return components.map((component) => {
    const members = new Set(component);
    const start = [...component].sort()[0]!;
    const from = new Map<string, string>();
    const queue = [start];
    while (queue.length) {
      const v = queue.shift()!;
      for (const w of graph.get(v) ?? []) {
        if (!members.has(w)) continue;
        if (w === start) {
          const circle = [start];
          for (let at = v; at !== start; at = from.get(at)!) circle.splice(1, 0, at);
          return [...circle, start];
        }
        if (!from.has(w)) {
          from.set(w, v);
          queue.push(w);
        }
      }
    }
    throw new Error('a strongly connected component without a circle');
  });
}

describe('import graph', () => {
  it('finds a circle, and names its modules in order', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c', 'd']],
      ['c', ['a']],
      ['d', []],
      ['e', ['e']],
    ]);
    expect(importCircles(graph)).toEqual(
      expect.arrayContaining([
        ['a', 'b', 'c', 'a'],
        ['e', 'e'],
      ]),
    );
    expect(importCircles(graph)).toHaveLength(2);
  });

  it('the provider boundary holds in src/ as written: the domain imports no concrete provider, providers and src/net no domain', () => {
    // The same boundary as the ESLint layers above, read from the files themselves (type imports included), so
    // that a file the lint does not see (an ignore, a disabled line) cannot cross it either.
    const graph = importGraph(SRC);
    const under = (dir: string) => (file: string) => file.startsWith(join(SRC, dir) + '/');
    const crossings = [...graph].flatMap(([file, targets]) =>
      targets
        .filter((target) =>
          under('domain')(file)
            ? under('providers')(target) && target !== join(SRC, 'providers/provider.ts')
            : (under('providers')(file) || under('net')(file)) && under('domain')(target),
        )
        .map((target) => `${relative(SRC, file)} → ${relative(SRC, target)}`),
    );
    expect(crossings).toEqual([]);
  });

  it('src/ has no import circles, type imports included', () => {
    const graph = importGraph(SRC);
    expect(graph.size).toBeGreaterThan(300);
    const circles = importCircles(graph).map((c) => c.map((file) => relative(SRC, file)).join(' → '));
    expect(circles, `import circles in src/:\n  ${circles.join('\n  ')}`).toEqual([]);
  });
});

// Tenant typing (issue 36): a query acting for one organization takes the tenant-bound handle (TenantDb, or the
// TenantTx of a transaction opened on one), so that the system handle cannot reach it without bindTenant()/
// tenantFor(). The exported query functions that take the system Db are the ones below, each marked in its code by
// a `// System handle: why` comment: they cross organizations (dispatch, receipts, webhook delivery batches,
// retention and schedulers, the admin CLI, lookups before the organization is known) or touch no tenant table.
const CROSS_ORGANIZATION = [
  'acquisition/campaigns.ts lockEnrollment',
  'acquisition/pending.ts purgeExpiredPending',
  'acquisition/public.ts campaignOrganization',
  'analytics/reports.ts dueReports',
  'analytics/rollups.ts compactRollup',
  'api-keys/api-keys.ts findApiKeyByPrefix',
  'api-keys/api-keys.ts insertApiKey',
  'api-keys/api-keys.ts touchApiKey',
  'billing/charges.ts chargeCurrentMonths',
  'blasts/blasts.ts analyzeRecipients',
  'contacts/imports.ts stageRows',
  'contacts/segments.ts deleteSegmentsUnusedFor',
  'conversations/contacts.ts setRcsCapableMany',
  'conversations/conversations.ts conversationIdsDerived',
  'events/events.ts releaseSavepoint',
  'events/events.ts rollbackToSavepoint',
  'events/events.ts savepoint',
  'mcp/platform-mappings.ts organizationExists',
  'mcp/platform-mappings.ts upsertPlatformMapping',
  'messages/dispatch.ts claimDue',
  'messages/dispatch.ts failMessage',
  'messages/dispatch.ts holdMessages',
  'messages/dispatch.ts mediaAssetsOfBatch',
  'messages/dispatch.ts moveToFallbackSender',
  'messages/dispatch.ts nextDue',
  'messages/dispatch.ts planFallbacks',
  'messages/dispatch.ts recordAccepted',
  'messages/dispatch.ts requeueMessages',
  'messages/fallback-conversations.ts followMovedMessages',
  'messages/links.ts clickLink',
  'messages/links.ts linkTarget',
  'messages/receipts.ts lockMessages',
  'messages/receipts.ts writeReceiptStates',
  'sender-ids/managed-numbers.ts numberManagedAnywhere',
  'sender-ids/protocols.ts protocolsOfSendersAnyOrganization',
  'sender-ids/senders.ts senderByPhoneNumber',
  'sender-ids/senders.ts sendersByIds',
  'templates/templates.ts templatesByIds',
  'webhooks/attempts.ts recordBatch',
  'webhooks/deliveries.ts cancelPendingDeliveries',
  'webhooks/deliveries.ts deliveriesForAttempts',
  'webhooks/deliveries.ts insertEventsAndDeliveries',
  'webhooks/endpoints.ts setEndpointState',
  'webhooks/endpoints.ts subscribedEndpoints',
  'webhooks/retention.ts deleteEventsOlderThan',
  'webhooks/retention.ts deleteTestAttemptsOlderThan',
  'webhooks/retention.ts organizationIds',
  'webhooks/secrets.ts newestSealedSecret',
  'webhooks/secrets.ts plainSecrets',
  'webhooks/secrets.ts replacePlainSecrets',
  'webhooks/secrets.ts validateSealedSecretsConstraint',
];

/** `file function` of each exported function of `source` whose first parameter is typed with the system Db or Tx, and whether it carries the `System handle:` comment. */
function systemHandleQueries(file: string, source: string): Array<{ key: string; marked: boolean }> {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: Array<{ key: string; marked: boolean }> = [];
  for (const st of sf.statements) {
    if (!ts.canHaveModifiers(st) || !ts.getModifiers(st)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
    const fns: Array<[string, ts.SignatureDeclarationBase]> = [];
    if (ts.isFunctionDeclaration(st) && st.name) fns.push([st.name.text, st]);
    if (ts.isVariableStatement(st))
      for (const d of st.declarationList.declarations)
        if (d.initializer && (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer)))
          fns.push([d.name.getText(sf), d.initializer]);
    for (const [name, fn] of fns) {
      const type = fn.parameters[0]?.type;
      const names = type && ts.isUnionTypeNode(type) ? type.types : type ? [type] : [];
      const system = names.some((t) => ts.isTypeReferenceNode(t) && ['Db', 'Tx'].includes(t.typeName.getText(sf)));
      if (!system) continue;
      const comments = ts.getLeadingCommentRanges(source, st.getFullStart()) ?? [];
      const marked = comments.some((c) => /System handle: \S/.test(source.slice(c.pos, c.end)));
      found.push({ key: `${file} ${name}`, marked });
    }
  }
  return found;
}

describe('tenant typing of queries', () => {
  const QUERIES = join(SRC, 'db/queries');

  it('finds an exported query on the system Db, and its System handle comment', () => {
    const source = [
      "import type { Db, TenantDb, Tx } from '../src/db/database.ts';",
      'export async function forgot(db: Db, orgId: string) { return [db, orgId]; }',
      '// System handle: every organization’s rows (a fixture).',
      'export const sweep = async (db: Tx) => db;',
      'export function scoped(db: TenantDb, orgId: string) { return [db, orgId]; }',
      'function internal(db: Db) { return db; }',
    ].join('\n');
    expect(systemHandleQueries('x/fixture.ts', source)).toEqual([
      { key: 'x/fixture.ts forgot', marked: false },
      { key: 'x/fixture.ts sweep', marked: true },
    ]);
  });

  it('every exported query on the system Db is on the cross-organization list and says why; the list names no other', () => {
    const found = sourceFiles(QUERIES).flatMap((file) => systemHandleQueries(relative(QUERIES, file), readFileSync(file, 'utf8')));
    expect(
      found.filter((f) => !CROSS_ORGANIZATION.includes(f.key)).map((f) => f.key),
      'queries on the system Db acting for one organization: type their handle TenantDb',
    ).toEqual([]);
    expect(CROSS_ORGANIZATION.filter((key) => !found.some((f) => f.key === key))).toEqual([]);
    expect(
      found.filter((f) => !f.marked).map((f) => f.key),
      'kept queries without a `// System handle: why` comment',
    ).toEqual([]);
  });
});
