/** A logger in the shape the client takes that keeps what it is told. */
export interface RecordingLogger {
  readonly lines: string[];
  debug(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Keeps what the client logs, so tests stay quiet and can assert on warnings. */
export function recordingLogger(): RecordingLogger {
  const lines: string[] = [];
  const push = (level: string) => (message: string) => void lines.push(`${level}: ${message}`);
  return { lines, debug: push('debug'), warn: push('warn'), error: push('error') };
}
