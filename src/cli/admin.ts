// Admin CLI: `npm run --silent admin -- <command> [options]`. Prints one JSON object on stdout.
// Works against the same database as a running server: DATABASE_URL, or the embedded server in DATA_DIR
// (shared while it runs, started and stopped here otherwise).
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { createApiKeyFor, createOrganization } from '../domain/organizations.ts';
import { MAX_PLATFORM_ACCOUNT_ID, setPlatformMapping } from '../domain/mcp/config.ts';
import { allScopes } from '../contract/document.ts';
import { startRuntime } from '../runtime.ts';
import { parsePhone } from '../domain/phone.ts';
import { setSimulatorFaults } from '../providers/simulator-faults.ts';

const USAGE = `usage:
  admin create-org --name <name>
  admin create-key --org <organizationId> --name <name> --scopes <a,b,c | all>
  admin simulate-inbound --org <organizationId> --from <E.164> --text <text>
  admin set-platform-mapping --org <organizationId> --account <platformAccountId>
  admin simulator-faults --transient <0..1>
  admin migrate`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      org: { type: 'string' },
      scopes: { type: 'string' },
      from: { type: 'string' },
      text: { type: 'string' },
      account: { type: 'string' },
      transient: { type: 'string' },
    },
    strict: true,
  });
  const need = (key: keyof typeof values): string => {
    const v = values[key];
    if (typeof v !== 'string' || v === '') throw new UsageError(`--${key} is required`);
    return v;
  };
  if (
    !command ||
    !['create-org', 'create-key', 'simulate-inbound', 'set-platform-mapping', 'simulator-faults', 'migrate'].includes(command)
  )
    throw new UsageError(`unknown command "${command ?? ''}"`);
  const inbound = command === 'simulate-inbound';
  // simulate-inbound needs the job queue: the simulator's callback job is delivered by a running server's worker.
  const runtime = await startRuntime({ ...loadConfig(), logLevel: 'silent', runWorkers: false }, { queue: inbound, keyCache: false });
  try {
    const { db, document } = runtime.context;
    switch (command) {
      case 'migrate':
        print({ migrated: true });
        break;
      case 'create-org':
        print(await createOrganization(db, document, need('name')));
        break;
      case 'simulate-inbound': {
        const org = need('org');
        const from = parsePhone(need('from'));
        if (!from) throw new UsageError('--from must be a valid phone number in E.164 format');
        const sender = await db
          .selectFrom('sender_ids')
          .select('phone_number')
          .where('organization_id', '=', org)
          .where('is_sandbox', '=', true)
          .orderBy('created_at')
          .executeTakeFirst()
          .catch(() => undefined);
        if (!sender?.phone_number) throw new UsageError(`organization ${org} has no sandbox sender`);
        const providerMessageId = await runtime.providers.simulator.injectInbound({
          from: from.e164,
          to: sender.phone_number,
          text: need('text'),
        });
        print({ providerMessageId, from: from.e164, to: sender.phone_number });
        break;
      }
      case 'set-platform-mapping': {
        // The link between the organization and its account on the messaging platform (needed by saveMcpConfig).
        const org = need('org');
        const account = need('account').trim();
        if (!UUID.test(org)) throw new UsageError(`no organization ${org}`);
        if (!account || account.length > MAX_PLATFORM_ACCOUNT_ID)
          throw new UsageError(`--account must be 1 to ${MAX_PLATFORM_ACCOUNT_ID} characters`);
        const row = await setPlatformMapping(db, org, account);
        if (!row) throw new UsageError(`no organization ${org}`);
        print({
          organizationId: row.organization_id,
          platformAccountId: row.platform_account_id,
          createdAt: row.created_at.toISOString(),
          updatedAt: row.updated_at.toISOString(),
        });
        break;
      }
      case 'simulator-faults': {
        // The carrier simulator's share of transient send failures, read by every running process within a second.
        const raw = need('transient');
        const transient = Number(raw);
        if (!/^\d*\.?\d+$/.test(raw) || transient > 1) throw new UsageError('--transient must be a number from 0 to 1');
        await setSimulatorFaults(db, transient);
        print({ transient });
        break;
      }
      case 'create-key': {
        const org = need('org');
        const raw = need('scopes');
        const known = new Set(allScopes(document));
        const scopes =
          raw === 'all'
            ? [...known]
            : raw
                .split(',')
                .map((s) => s.trim())
                .filter(Boolean);
        const unknown = scopes.filter((s) => !known.has(s));
        if (unknown.length)
          throw new UsageError(`unknown scopes: ${unknown.join(', ')}; valid scopes: ${[...known].sort().join(', ')} (or all)`);
        const exists = await db
          .selectFrom('organizations')
          .select('id')
          .where('id', '=', org)
          .executeTakeFirst()
          .catch(() => undefined);
        if (!exists) throw new UsageError(`no organization ${org}`);
        print(await createApiKeyFor(db, org, need('name'), scopes));
        break;
      }
    }
    return 0;
  } finally {
    await runtime.close();
  }
}

class UsageError extends Error {}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`${(error as Error).message}\n${USAGE}`);
      process.exit(2);
    }
    console.error(error);
    process.exit(1);
  },
);
