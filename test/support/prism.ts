// Prism serving a provider's OpenAPI document as its contract fake: `--errors` answers 422 to any request that
// breaks the document's schemas (and 401 to one without the documented credentials), `-d` makes up answers from
// the schemas (a fresh message SID per send). Started once per test file (~2 s). `violations()` is what Prism
// logged about requests it refused: a test asserts it stays empty.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const prismBin = join(dirname(require.resolve('@stoplight/prism-cli/package.json')), 'dist', 'index.js');

export type Prism = { baseUrl: string; output: () => string; violations: () => string[]; stop: () => void };

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export async function startPrism(documentPath: string): Promise<Prism> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [prismBin, 'mock', '-d', '--errors', '-h', '127.0.0.1', '-p', String(port), documentPath],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SCARF_ANALYTICS: 'false', DO_NOT_TRACK: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
    },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`prism did not start:\n${output}`)), 90_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Prism is listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`prism exited with ${code}:\n${output}`)));
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    output: () => output,
    // By the line's level (`✖  error`, `⚠  warning`), not by its words: the start-up lines list every route with
    // example values Prism makes up at random, and a made-up `…&InPostalCode=error` read as a violation.
    violations: () => output.split('\n').filter((l) => /[✖⚠]\s+(error|warning|fatal)\s/.test(l)),
    stop: () => void child.kill('SIGTERM'),
  };
}
