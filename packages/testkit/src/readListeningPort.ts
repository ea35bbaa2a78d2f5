import type { Service } from './spawnService.js';

export interface ReadListeningPortOptions {
  /** Default 10 000 ms. */
  timeoutMs?: number;
  /** Extra fields the log record must have, for a process that listens on several ports. */
  where?: Readonly<Record<string, string | number | boolean>>;
}

const LISTENING = /"msg"\s*:\s*"listening"/;

function listeningPort(line: string, where: ReadListeningPortOptions['where']): number | undefined {
  if (!LISTENING.test(line)) return undefined;
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    // A line that merely mentions "msg":"listening" without being a JSON record is not the one.
    return undefined;
  }
  if (typeof record !== 'object' || record === null) return undefined;
  const fields = record as Record<string, unknown>;
  for (const [key, value] of Object.entries(where ?? {})) {
    if (fields[key] !== value) return undefined;
  }
  const port = fields.port;
  return typeof port === 'number' && Number.isInteger(port) && port > 0 && port < 65_536 ? port : undefined;
}

/**
 * The port from the service's JSON log record `{"msg":"listening","port":P,…}`. Services listen on
 * port 0 in tests and log the port the kernel chose, which avoids port races entirely.
 */
export async function readListeningPort(service: Service, options: ReadListeningPortOptions = {}): Promise<number> {
  const { timeoutMs = 10_000, where } = options;
  const line = await service.waitForLine((text) => listeningPort(text, where) !== undefined, timeoutMs);
  const port = listeningPort(line, where);
  if (port === undefined) throw new Error(`${service.name}: listening line lost its port: ${line}`);
  return port;
}
