import { ExitCode } from './exitCodes.js';
import { exitOnConfigError } from './exitOnConfigError.js';
import { StartupConfigError } from './StartupConfigError.js';
import type { BootLog } from './exitOnConfigError.js';
import { FaultPolicy } from './FaultPolicy.js';
import type { FaultKind } from './FaultPolicy.js';
import type { ConfigResult } from './parseEnv.js';

/** The part of the app's logger the boot sequence writes to once the configuration is known. */
export interface AppLog extends BootLog {
  info(fields: object, message: string): void;
}

type StopSignal = 'SIGTERM' | 'SIGINT';

/** Where faults and stop signals are announced: the process, or an emitter in tests. */
export interface BootTarget {
  on(event: FaultKind, listener: (reason: unknown) => void): unknown;
  on(event: StopSignal, listener: (signal: NodeJS.Signals) => void): unknown;
}

export interface BootAppOptions<Config, App, Log extends AppLog> {
  /** Names the app in the fault policy's lines and in the default start-failure message. */
  app: string;
  /** Writes until the configuration (and with it the log level) is known. */
  bootLog: BootLog;
  parseConfig: () => ConfigResult<Config>;
  /** The app's logger, at the configured level. */
  log: (config: Config) => Log;
  /** Builds and starts the app; a throw is a start failure. The fault policy is installed already. */
  create: (config: Config, log: Log, faults: FaultPolicy) => Promise<App>;
  /** The fatal line when `create` throws: default "<app> failed to start", written by `log`. */
  failedToStart?: { message: string; by: 'bootLog' | 'log' };
  /**
   * How SIGTERM/SIGINT end the app: the first runs `run` and exits 0 (1 if it failed, logged
   * "shutdown failed"); later ones go to `again`, or change nothing. Without it the app handles
   * the signals itself. With `budgetMs`, a stop still running after that long is given up:
   * logged ("shutdown did not finish") and exit 1, so that a stop waiting on a server that is
   * gone (a lease release on a Redis that is down) does not hold the process until its SIGKILL.
   */
  stop?: {
    run: (app: App) => Promise<void>;
    again?: (app: App, signal: NodeJS.Signals, log: Log) => void;
    budgetMs?: (config: Config) => number;
  };
  /** Default: process.exit. */
  exit?: (code: number) => never;
  /** Default: the real process. */
  target?: BootTarget;
}

export interface BootedApp<Config, App, Log> {
  readonly config: Config;
  readonly log: Log;
  readonly app: App;
  readonly faults: FaultPolicy;
}

/**
 * The start of every app's main: faults handled from the first line (exit 70), a bad
 * configuration reported whole and exit 78, a failed start exit 1 (ExitCode), and a stop signal
 * that ends the process only once the app has shut down.
 */
export async function bootApp<Config, App, Log extends AppLog>(
  options: BootAppOptions<Config, App, Log>,
): Promise<BootedApp<Config, App, Log>> {
  const exit: (code: number) => never = options.exit ?? ((code) => process.exit(code));
  const target = options.target ?? process;
  const faults = new FaultPolicy({ app: options.app, log: options.bootLog, exit, target }).install();
  const parsed = options.parseConfig();
  if (!parsed.ok) exitOnConfigError(options.bootLog, parsed.error, exit);
  const config = parsed.config;
  const log = options.log(config);
  let app: App;
  try {
    app = await options.create(config, log, faults);
  } catch (error) {
    if (error instanceof StartupConfigError) exitOnConfigError(log, error.config, exit);
    const failed = options.failedToStart ?? { message: `${options.app} failed to start`, by: 'log' };
    (failed.by === 'bootLog' ? options.bootLog : log).fatal({ err: error, exitCode: ExitCode.startup }, failed.message);
    exit(ExitCode.startup);
  }
  const stop = options.stop;
  if (stop !== undefined) {
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals): void => {
      signals += 1;
      if (signals > 1) {
        stop.again?.(app, signal, log);
        return;
      }
      log.info({ signal }, 'shutting down');
      const budgetMs = stop.budgetMs?.(config);
      if (budgetMs !== undefined) {
        setTimeout(() => {
          log.error({ budgetMs }, 'shutdown did not finish within its budget: exiting');
          exit(1);
        }, budgetMs).unref();
      }
      stop.run(app).then(
        () => exit(0),
        (error: unknown) => {
          log.error({ err: error }, 'shutdown failed');
          exit(1);
        },
      );
    };
    target.on('SIGTERM', onSignal);
    target.on('SIGINT', onSignal);
  }
  return { config, log, app, faults };
}
