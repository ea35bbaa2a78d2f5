import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { bootApp } from './bootApp.js';
import type { BootAppOptions } from './bootApp.js';
import { configError } from './parseEnv.js';
import { StartupConfigError } from './StartupConfigError.js';
import type { ConfigResult } from './parseEnv.js';

class Exited extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

type Line = { by: 'boot' | 'app'; level: string; fields: object; message: string };

function harness(parsed: ConfigResult<{ level: string }>) {
  const lines: Line[] = [];
  const logger = (by: Line['by']) => ({
    fatal: (fields: object, message: string) => lines.push({ by, level: 'fatal', fields, message }),
    error: (fields: object, message: string) => lines.push({ by, level: 'error', fields, message }),
    info: (fields: object, message: string) => lines.push({ by, level: 'info', fields, message }),
  });
  const target = new EventEmitter();
  const options = {
    app: 'demo',
    bootLog: logger('boot'),
    parseConfig: () => parsed,
    log: () => logger('app'),
    exit: (code: number): never => {
      throw new Exited(code);
    },
    target,
  } satisfies Partial<BootAppOptions<{ level: string }, string, ReturnType<typeof logger>>>;
  return { lines, target, options };
}

const valid: ConfigResult<{ level: string }> = { ok: true, config: { level: 'info' } };

describe('bootApp', () => {
  it('reports a bad configuration with the boot logger and exits 78 before creating anything', async () => {
    const h = harness({ ok: false, error: configError('demo', [{ variable: 'PORT', message: 'PORT="x": bad' }]) });
    let created = false;
    const booted = bootApp({ ...h.options, create: () => ((created = true), Promise.resolve('app')) });
    await expect(booted).rejects.toEqual(new Exited(78));
    expect(created).toBe(false);
    expect(h.lines).toMatchObject([{ by: 'boot', level: 'fatal', fields: { variables: ['PORT'], exitCode: 78 } }]);
  });

  it('logs a failed start with the app logger by default, or the boot logger when asked, and exits 1', async () => {
    const error = new Error('port taken');
    const h = harness(valid);
    await expect(bootApp({ ...h.options, create: () => Promise.reject(error) })).rejects.toEqual(new Exited(1));
    expect(h.lines).toEqual([{ by: 'app', level: 'fatal', fields: { err: error, exitCode: 1 }, message: 'demo failed to start' }]);
    const b = harness(valid);
    const failedToStart = { message: 'demo service failed to start', by: 'bootLog' } as const;
    await expect(bootApp({ ...b.options, failedToStart, create: () => Promise.reject(error) })).rejects.toEqual(new Exited(1));
    expect(b.lines).toEqual([{ by: 'boot', level: 'fatal', fields: { err: error, exitCode: 1 }, message: 'demo service failed to start' }]);
  });

  it('exits 78, not 1, when the start finds that what a variable names is wrong', async () => {
    const h = harness(valid);
    const refusal = new StartupConfigError(configError('demo', [{ variable: 'KEY_FILE', message: 'KEY_FILE /k.json is not JSON' }]));
    await expect(bootApp({ ...h.options, create: () => Promise.reject(refusal) })).rejects.toEqual(new Exited(78));
    expect(h.lines).toMatchObject([{ by: 'app', level: 'fatal', fields: { variables: ['KEY_FILE'], exitCode: 78 } }]);
  });

  it('returns the config, the app logger and the app; faults are handled by then', async () => {
    const h = harness(valid);
    const booted = await bootApp({ ...h.options, create: (config) => Promise.resolve(`app at ${config.level}`) });
    expect(booted.app).toBe('app at info');
    expect(booted.config).toEqual({ level: 'info' });
    expect(() => h.target.emit('unhandledRejection', new Error('late'))).toThrow(new Exited(70));
  });

  it('runs the stop once on the first signal and hands later ones to `again`', async () => {
    const h = harness(valid);
    const runs: string[] = [];
    const again: string[] = [];
    await bootApp({
      ...h.options,
      create: () => Promise.resolve('app'),
      stop: {
        run: (app) => {
          runs.push(app);
          return new Promise<void>(() => undefined);
        },
        again: (app, signal) => again.push(`${app} ${signal}`),
      },
    });
    h.target.emit('SIGTERM', 'SIGTERM');
    h.target.emit('SIGINT', 'SIGINT');
    expect(runs).toEqual(['app']);
    expect(again).toEqual(['app SIGINT']);
    expect(h.lines).toEqual([{ by: 'app', level: 'info', fields: { signal: 'SIGTERM' }, message: 'shutting down' }]);
  });
  it('gives up a stop that outlives its budget: logged, exit 1', async () => {
    vi.useFakeTimers();
    try {
      const h = harness(valid);
      const exits: number[] = [];
      await bootApp({
        ...h.options,
        exit: (code: number): never => {
          exits.push(code);
          return undefined as never;
        },
        create: () => Promise.resolve('app'),
        stop: { run: () => new Promise<void>(() => undefined), budgetMs: () => 10_000 },
      });
      h.target.emit('SIGTERM', 'SIGTERM');
      vi.advanceTimersByTime(9_999);
      expect(exits).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(exits).toEqual([1]);
      expect(h.lines.at(-1)).toEqual({
        by: 'app',
        level: 'error',
        fields: { budgetMs: 10_000 },
        message: 'shutdown did not finish within its budget: exiting',
      });
    } finally {
      vi.useRealTimers();
    }
  });
});
