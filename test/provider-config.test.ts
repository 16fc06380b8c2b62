// Which provider plays each slot comes from the environment: nothing set keeps the carrier simulator in both
// slots; a real provider with incomplete credentials stops the process at start with one line saying what is
// missing (exit code 2); with complete ones the process starts with it.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { startServing } from './support/processes.ts';

const run = promisify(execFile);
const SID = `AC${'0123456789abcdef'.repeat(2)}`;
const env = () => ({ ...process.env, DATABASE_URL: inject('databaseUrl'), NODE_ENV: 'test', LOG_LEVEL: 'info', RUN_WORKERS: '0' });

describe('provider configuration', () => {
  it('keeps the simulator in both slots when nothing is configured', () => {
    expect(loadConfig({ NODE_ENV: 'test' }).providers).toEqual({ PROVIDER_A: { kind: 'simulator' }, PROVIDER_B: { kind: 'simulator' } });
  });

  it('names what is missing or wrong, in one line', () => {
    const problem = (e: NodeJS.ProcessEnv) => {
      try {
        loadConfig({ NODE_ENV: 'test', CALLBACK_BASE_URL: 'https://api.example.com', ...e });
        return null;
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
    };
    expect(problem({ PROVIDER_A: 'twilio' })).toBe('PROVIDER_A=twilio is missing TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN');
    expect(problem({ PROVIDER_B: 'twilio', TWILIO_ACCOUNT_SID: SID })).toBe('PROVIDER_B=twilio is missing TWILIO_AUTH_TOKEN');
    expect(problem({ PROVIDER_A: 'twilio', TWILIO_ACCOUNT_SID: 'nope', TWILIO_AUTH_TOKEN: 't' })).toBe(
      'TWILIO_ACCOUNT_SID must be AC followed by 32 hex digits',
    );
    expect(problem({ PROVIDER_A: 'carrier-pigeon' })).toBe(
      'PROVIDER_A must be one of simulator, twilio, telnyx, rbm (got "carrier-pigeon")',
    );
    expect(problem({ PROVIDER_B: 'telnyx', TELNYX_API_KEY: 'KEY1' })).toBe('PROVIDER_B=telnyx is missing TELNYX_PUBLIC_KEY');
    expect(problem({ PROVIDER_B: 'rbm', RBM_WEBHOOK_CLIENT_TOKEN: 't' })).toBe('PROVIDER_B=rbm is missing RBM_SERVICE_ACCOUNT_KEY_FILE');
    expect(problem({ PROVIDER_B: 'rbm', RBM_WEBHOOK_CLIENT_TOKEN: 't', RBM_SERVICE_ACCOUNT_KEY_FILE: '/nonexistent/key.json' })).toMatch(
      /^RBM_SERVICE_ACCOUNT_KEY_FILE cannot be read as a service account JSON key/,
    );
    expect(problem({ PROVIDER_B: 'telnyx', TELNYX_API_KEY: 'KEY1', TELNYX_PUBLIC_KEY: 'abc' })).toBe(
      'TELNYX_PUBLIC_KEY must be the base64 Ed25519 public key from Mission Control (32 bytes)',
    );
    expect(
      loadConfig({
        NODE_ENV: 'test',
        CALLBACK_BASE_URL: 'https://api.example.com',
        PROVIDER_A: 'twilio',
        TWILIO_ACCOUNT_SID: SID,
        TWILIO_AUTH_TOKEN: 't',
        PROVIDER_B: 'telnyx',
        TELNYX_API_KEY: 'KEY1',
        TELNYX_PUBLIC_KEY: Buffer.alloc(32, 7).toString('base64'),
      }).providers.PROVIDER_B,
    ).toMatchObject({ kind: 'telnyx', apiKey: 'KEY1' });
    expect(problem({ PROVIDER_A: 'twilio', PROVIDER_B: 'twilio', TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 't' })).toBe(
      'PROVIDER_A and PROVIDER_B cannot both be twilio',
    );
    expect(() => loadConfig({ NODE_ENV: 'test', PROVIDER_A: 'twilio', TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 't' })).toThrow(
      'PROVIDER_A=twilio needs CALLBACK_BASE_URL',
    );
    expect(problem({ PROVIDER_A: 'twilio', TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 't' })).toBeNull();
  });

  it('stops the server at start with that one line and exit code 2, never printing the credentials', async () => {
    const err = (await run(process.execPath, ['src/main.js'], {
      env: { ...env(), PROVIDER_A: 'twilio', TWILIO_ACCOUNT_SID: SID, CALLBACK_BASE_URL: 'https://api.example.com' },
    }).catch((e: unknown) => e)) as { code: number; stderr: string; stdout: string };
    expect(err.code).toBe(2);
    expect(err.stderr.trim()).toBe('configuration error: PROVIDER_A=twilio is missing TWILIO_AUTH_TOKEN');
    expect(err.stdout).toBe('');
  });

  it('starts with complete credentials, Twilio playing PROVIDER_A, and logs no token', async () => {
    const token = 'f00dfeedf00dfeedf00dfeedf00dfeed';
    const { stdout } = await run(process.execPath, ['src/cli/admin.ts', 'create-org', '--name', 'Configured Twilio org'], { env: env() });
    const secret = JSON.parse(stdout).apiKey.secret as string;
    const { child, port, log } = await startServing(process.execPath, ['src/main.js'], {
      ...env(),
      PORT: '0',
      LOG_LEVEL: 'debug',
      PROVIDER_A: 'twilio',
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: token,
      CALLBACK_BASE_URL: 'https://api.example.com',
      // Nothing listens there: Twilio is unreachable.
      TWILIO_API_BASE_URL: 'http://127.0.0.1:9',
    });
    try {
      const health = await fetch(`http://127.0.0.1:${port}/health`);
      expect(health.status).toBe(200);
      // Searching PROVIDER_A's inventory now asks Twilio (unreachable here: 502), not the simulator (200).
      const search = await fetch(`http://127.0.0.1:${port}/v1/sender-ids/numbers/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ provider: 'PROVIDER_A', inventoryType: 'Local' }),
      });
      expect(search.status).toBe(502);
      expect(((await search.json()) as { code: string }).code).toBe('UPSTREAM_ERROR');
      expect(log()).not.toContain(token);
    } finally {
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  });
});
