import { ExitCode } from './exitCodes.js';
import type { ConfigError } from './parseEnv.js';

/** The part of a pino logger the boot helpers write to. */
export interface BootLog {
  fatal(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** Logs every configuration problem in one record and exits 78. */
export function exitOnConfigError(log: BootLog, error: ConfigError, exit: (code: number) => never = (code) => process.exit(code)): never {
  log.fatal({ code: error.code, variables: error.problems.map((p) => p.variable), exitCode: ExitCode.config }, error.message);
  return exit(ExitCode.config);
}
