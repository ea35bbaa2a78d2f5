import { ExitCode } from './exitCodes.js';
import type { BootLog } from './exitOnConfigError.js';

export type FaultKind = 'unhandledRejection' | 'uncaughtException';

/** Where faults are announced: the process, or an emitter in tests. */
export interface FaultSource {
  on(event: FaultKind, listener: (reason: unknown) => void): unknown;
}

export interface FaultPolicyOptions {
  /** Names the app in the log line. */
  app: string;
  log: BootLog;
  /** Default: process.exit (which never returns). */
  exit?: (code: number) => void;
  /** Default: the real process. */
  target?: FaultSource;
}

/**
 * What every app does with a rejection or exception nobody handled: log it with its context, count
 * it, run a short bounded shutdown (the relay drains its sockets over the fast window), and exit
 * 70 so that Kubernetes restarts the pod. Carrying on would leave a process whose state nobody
 * can vouch for: a half-settled channel, a lease held by a dead loop. Further faults during the
 * shutdown are logged and counted, and change nothing.
 */
export class FaultPolicy {
  readonly #options: FaultPolicyOptions;
  #count: ((kind: FaultKind) => void) | null = null;
  #shutdown: { run: () => Promise<void>; budgetMs: number } | null = null;
  #exiting = false;
  readonly #onRejection = (reason: unknown): void => this.#fault('unhandledRejection', reason);
  readonly #onException = (error: unknown): void => this.#fault('uncaughtException', error);

  constructor(options: FaultPolicyOptions) {
    this.#options = options;
  }

  /** Takes over both events: from now on no fault ends the process without the policy. */
  install(): this {
    const target = this.#options.target ?? process;
    target.on('unhandledRejection', this.#onRejection);
    target.on('uncaughtException', this.#onException);
    return this;
  }

  /** Where faults are counted, once the app's metrics exist (faults before that are only logged). */
  countWith(count: (kind: FaultKind) => void): void {
    this.#count = count;
  }

  /** Work to do before exiting, given at most `budgetMs`; the process exits then whatever it did. */
  shutdownWith(run: () => Promise<void>, budgetMs: number): void {
    this.#shutdown = { run, budgetMs };
  }

  #fault(kind: FaultKind, reason: unknown): void {
    const { log, app } = this.#options;
    // pino serializes an Error under `err`; anything else (a rejected string) is logged as it is.
    const fields = reason instanceof Error ? { kind, err: reason } : { kind, reason: String(reason) };
    try {
      this.#count?.(kind);
    } catch (error) {
      log.error({ kind, err: error }, 'could not count the fault');
    }
    if (this.#exiting) {
      log.error(fields, `${kind} while exiting after an earlier fault`);
      return;
    }
    this.#exiting = true;
    const shutdown = this.#shutdown;
    log.fatal(
      { ...fields, app, exitCode: ExitCode.fault, shutdownBudgetMs: shutdown?.budgetMs ?? 0 },
      `${kind}: ${app} exits with ${ExitCode.fault} so that it restarts clean`,
    );
    const exit = this.#options.exit ?? ((code: number) => process.exit(code));
    if (shutdown === null) {
      exit(ExitCode.fault);
      return;
    }
    const timer = setTimeout(() => {
      log.error({ kind, budgetMs: shutdown.budgetMs }, 'shutdown after a fault ran out of time');
      exit(ExitCode.fault);
    }, shutdown.budgetMs);
    Promise.resolve()
      .then(shutdown.run)
      .then(
        () => {
          clearTimeout(timer);
          exit(ExitCode.fault);
        },
        (error: unknown) => {
          clearTimeout(timer);
          log.error({ kind, err: error }, 'shutdown after a fault failed');
          exit(ExitCode.fault);
        },
      );
  }
}
