import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export type RedisServerHandle = { port: number; url: string; stop(): Promise<void> };

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function waitReady(child: ChildProcess, deadlineMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => finish(new Error(`redis-server not ready within ${deadlineMs} ms:\n${output}`)), deadlineMs);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) finish();
    };
    const onExit = (code: number | null): void => finish(new Error(`redis-server exited (${code}) before ready:\n${output}`));
    function finish(error?: Error): void {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      if (error === undefined) resolve();
      else reject(error);
    }
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
  });
}

/** A throwaway redis-server on a free port, for tests; never the shared one on 6379. */
export async function startRedisServer(deadlineMs = 10_000): Promise<RedisServerHandle> {
  let lastError: unknown;
  // The free port can be taken between probing and binding; a couple of attempts absorb that.
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const port = await freePort();
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      await waitReady(child, deadlineMs);
    } catch (error) {
      lastError = error;
      child.kill('SIGKILL');
      continue;
    }
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    return {
      port,
      url: `redis://127.0.0.1:${port}`,
      async stop() {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGKILL');
        await exited;
      },
    };
  }
  throw lastError instanceof Error ? lastError : new Error('could not start redis-server');
}
