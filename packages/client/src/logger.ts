export type LogFields = Record<string, unknown>;

export interface RelayLogger {
  debug(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/** Warnings and errors reach the console so nothing is lost when the app passes no logger. */
export const consoleLogger: RelayLogger = {
  debug: () => undefined,
  warn: (message, fields) => console.warn(`[streamgate] ${message}`, fields ?? {}),
  error: (message, fields) => console.error(`[streamgate] ${message}`, fields ?? {}),
};
