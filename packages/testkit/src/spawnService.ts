import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { trackChild, untrackChild } from './childRegistry.js';
import { OutputBuffer } from './outputBuffer.js';
import { guardedCommand } from './parentDeathGuard.js';
import type { OutputLine, OutputStream } from './outputBuffer.js';

export interface SpawnServiceOptions {
  /** Names the process in every error message. */
  name: string;
  command: string;
  args?: readonly string[];
  /** Laid over the parent's environment; `undefined` removes a variable. */
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
  /** The service is ready when a stdout line matches; without it, ready once spawned. */
  readyPattern?: RegExp;
  /** Default 15 000 ms. */
  readyTimeoutMs?: number;
  /** Copy every line to the test's stderr as it arrives; default: env STREAMGATE_TESTKIT_ECHO=1. */
  echo?: boolean;
  /** Give the process a stdin pipe that `write` feeds (a CLI driven by commands); default: no stdin. */
  stdin?: boolean;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started (e.g. ENOENT) rather than exiting by itself. */
  error?: Error;
}

export type LineMatcher = RegExp | ((line: string) => boolean);

export interface WaitForLineOptions {
  /** Consider only lines from this `lineCount` on; default 0 (every retained line). */
  fromLine?: number;
  /** Default both. */
  stream?: OutputStream;
}

export interface Service extends AsyncDisposable {
  readonly name: string;
  readonly pid: number;
  /** The last 200 output lines (stdout and stderr interleaved as they arrived). */
  readonly lines: readonly string[];
  /** How many lines were printed so far: pass it as `fromLine` to wait only for newer lines. */
  readonly lineCount: number;
  /** Set once the process has exited. */
  readonly exitStatus: ExitStatus | undefined;
  /** Resolves on the process's exit, never rejects. */
  readonly exited: Promise<ExitStatus>;
  /** Resolves with the first matching line; rejects with the output at the deadline or on exit. */
  waitForLine(match: LineMatcher, timeoutMs?: number, options?: WaitForLineOptions): Promise<string>;
  /** Sends a signal; false if the process is already gone. */
  signal(sig: NodeJS.Signals): boolean;
  /** SIGTERM, then SIGKILL after `timeoutMs` (default 5 000); resolves once the process is gone. */
  stop(timeoutMs?: number): Promise<ExitStatus>;
  /** The retained output, formatted for an error message. */
  output(): string;
  /** Writes to the process's stdin (spawned with `stdin: true`); false if there is none or it has exited. */
  write(text: string): boolean;
}

/** An error about a spawned process; its message ends with the process's recent output. */
export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  constructor(
    readonly service: string,
    what: string,
    readonly output: string,
    options?: { cause?: unknown },
  ) {
    super(`${service}: ${what}\n${output}`, options);
  }
}

// After `exit`, `close` follows once stdout and stderr are drained; a grandchild that inherited
// the pipes can keep them open forever, so the exit is final after this long regardless.
const STDIO_FLUSH_GRACE_MS = 1_000;

interface Waiter {
  matches: (line: OutputLine) => boolean;
  resolve: (line: string) => void;
  reject: (error: Error) => void;
}

function describeExit(status: ExitStatus): string {
  if (status.error) return `could not be started: ${status.error.message}`;
  return status.signal !== null ? `exited on signal ${status.signal}` : `exited with code ${String(status.code)}`;
}

function toMatcher(match: LineMatcher): (line: string) => boolean {
  if (typeof match === 'function') return match;
  // A global or sticky RegExp keeps state between test() calls; copy it without those flags.
  const re = new RegExp(match.source, match.flags.replace(/[gy]/g, ''));
  return (line) => re.test(line);
}

/**
 * Spawns a process whose output a test can wait on. Resolves once the process is ready; rejects
 * with its output if it exits first or is not ready in time (and then makes sure it is gone, since
 * the caller never gets a handle to stop it).
 */
export async function spawnService(options: SpawnServiceOptions): Promise<Service> {
  const { name, command, args = [], cwd, readyPattern, readyTimeoutMs = 15_000 } = options;
  const echo = options.echo ?? process.env.STREAMGATE_TESTKIT_ECHO === '1';
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...process.env, ...options.env })) {
    if (value !== undefined) env[key] = value;
  }

  const guarded = guardedCommand(command, args, env.PATH);
  if ('missing' in guarded) {
    const error = Object.assign(new Error(`spawn ${command} ENOENT`), { code: 'ENOENT' });
    throw new ServiceError(name, `could not be started: ${error.message} (not found on PATH)`, '--- no output ---', {
      cause: error,
    });
  }
  const child =
    options.stdin === true
      ? spawn(guarded.command, guarded.args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] })
      : spawn(guarded.command, guarded.args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  trackChild(child);
  const buffer = new OutputBuffer(200);
  // A write racing the child's exit fails with EPIPE on the stream, which must not end the test.
  child.stdin?.on('error', (error) => buffer.push('stderr', `[testkit] stdin: ${error.message}`));
  const waiters = new Set<Waiter>();
  let exitStatus: ExitStatus | undefined;
  let resolveExited: (status: ExitStatus) => void = () => undefined;
  const exited = new Promise<ExitStatus>((resolve) => {
    resolveExited = resolve;
  });

  const onLine = (stream: OutputStream) => (text: string) => {
    const line = buffer.push(stream, text);
    if (echo) process.stderr.write(`[${name}${stream === 'stderr' ? ' stderr' : ''}] ${text}\n`);
    for (const waiter of waiters) {
      if (waiter.matches(line)) {
        waiters.delete(waiter);
        waiter.resolve(text);
      }
    }
  };
  createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', onLine('stdout'));
  createInterface({ input: child.stderr, crlfDelay: Infinity }).on('line', onLine('stderr'));

  const finish = (status: ExitStatus) => {
    if (exitStatus !== undefined) return;
    exitStatus = status;
    untrackChild(child);
    const error = new ServiceError(name, `${describeExit(status)} while a line was awaited`, buffer.format());
    for (const waiter of waiters) waiter.reject(error);
    waiters.clear();
    resolveExited(status);
  };
  child.once('exit', (code, signal) => {
    const timer = setTimeout(() => finish({ code, signal }), STDIO_FLUSH_GRACE_MS);
    timer.unref();
    child.once('close', () => {
      clearTimeout(timer);
      finish({ code, signal });
    });
  });
  child.on('error', (error) => {
    // `error` means either the spawn failed (no pid, no `exit` will follow) or a kill could not be
    // delivered; the second is recorded in the output where a failing test will show it.
    if (child.pid === undefined) finish({ code: null, signal: null, error });
    else buffer.push('stderr', `[testkit] child process error: ${error.message}`);
  });

  const waitForLine = (match: LineMatcher, timeoutMs = 10_000, opts: WaitForLineOptions = {}): Promise<string> => {
    const test = toMatcher(match);
    const fromLine = opts.fromLine ?? 0;
    const matches = (line: OutputLine) =>
      line.seq >= fromLine && (opts.stream === undefined || line.stream === opts.stream) && test(line.text);
    const seen = buffer.snapshot().find(matches);
    if (seen) return Promise.resolve(seen.text);
    if (exitStatus !== undefined) {
      return Promise.reject(new ServiceError(name, `${describeExit(exitStatus)}; no line matched ${String(match)}`, buffer.format()));
    }
    return new Promise<string>((resolve, reject) => {
      const waiter: Waiter = {
        matches,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new ServiceError(name, `no line matched ${String(match)} within ${timeoutMs} ms`, buffer.format()));
      }, timeoutMs);
      waiters.add(waiter);
    });
  };

  const signal = (sig: NodeJS.Signals): boolean => exitStatus === undefined && child.kill(sig);

  const stop = async (timeoutMs = 5_000): Promise<ExitStatus> => {
    if (exitStatus !== undefined) return exitStatus;
    signal('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const first = await Promise.race([exited, timedOut]);
    clearTimeout(timer);
    if (first !== 'timeout') return first;
    buffer.push('stderr', `[testkit] no exit ${timeoutMs} ms after SIGTERM; sending SIGKILL`);
    signal('SIGKILL');
    return exited;
  };

  // Spawn failures (ENOENT, EACCES) are reported through `error`, after spawn() returned.
  await new Promise<void>((resolve) => {
    child.once('spawn', resolve);
    void exited.then(() => resolve());
  });
  if (exitStatus !== undefined || child.pid === undefined) {
    const status = await exited;
    throw new ServiceError(name, describeExit(status), buffer.format(), { cause: status.error });
  }
  const pid = child.pid;

  if (readyPattern) {
    try {
      await waitForLine(readyPattern, readyTimeoutMs, { stream: 'stdout' });
    } catch (error) {
      // Decided before stop(), which would make every failure look like an exit.
      const what = exitStatus === undefined ? 'not ready' : `${describeExit(exitStatus)} before it was ready`;
      await stop(2_000);
      throw new ServiceError(name, `${what} (waited for ${String(readyPattern)} on stdout, ${readyTimeoutMs} ms)`, buffer.format(), {
        cause: error,
      });
    }
  }

  return {
    name,
    pid,
    get lines() {
      return buffer.snapshot().map((line) => line.text);
    },
    get lineCount() {
      return buffer.total;
    },
    get exitStatus() {
      return exitStatus;
    },
    exited,
    waitForLine,
    signal,
    stop,
    output: () => buffer.format(),
    write: (text) => {
      const stdin = child.stdin;
      if (stdin === null || exitStatus !== undefined || stdin.destroyed) return false;
      stdin.write(text);
      return true;
    },
    [Symbol.asyncDispose]: async () => {
      await stop();
    },
  };
}
