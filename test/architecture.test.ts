// The layers of the section template are enforced by ESLint (eslint.config.js, run by `npm run lint` in
// `npm test`); these prove the rules refuse a deliberate violation and let the allowed direction through.
import { ESLint } from 'eslint';
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
