/** The logging surface the core needs; pino's Logger satisfies it. */
export interface CoreLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}
