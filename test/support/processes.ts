// The server as a process, the way users run it, for tests: a free port, and a child that has logged its
// "listening on" line.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

export type ServingProcess = { child: ChildProcess; port: number; log: () => string };

/** Spawns `command args` (PORT=0 in `env` picks a port) and resolves once it logs where it listens. */
export async function startServing(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<ServingProcess> {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line:\n${log}`)), timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      const m = /listening on http:\/\/localhost:(\d+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  });
  return { child, port, log: () => log };
}
