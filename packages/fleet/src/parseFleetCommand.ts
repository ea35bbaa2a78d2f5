/** A command typed into `npm run fleet`. */
export type FleetCommand =
  | { op: 'cut' | 'restore'; provider: string; only?: 'ws' | 'http' }
  | { op: 'drain'; relay: string; replace: boolean }
  | { op: 'kill-primary'; stream?: string }
  | { op: 'restart-nodes' }
  | { op: 'status' }
  | { op: 'help' }
  | { op: 'quit' }
  | { op: 'nothing' };

export type FleetCommandError = { code: 'unknown_command' | 'bad_arguments'; retryable: false; message: string };

export type ParsedFleetCommand = { ok: true; command: FleetCommand } | { ok: false; error: FleetCommandError };

export const FLEET_HELP: readonly string[] = [
  'commands:',
  "  cut <provider> [ws|http]      the provider's proxy cuts its sockets and refuses new ones (ingest fails over)",
  '  restore <provider> [ws|http]  the provider serves again',
  '  drain <relay> [replace]       SIGTERM the relay (e.g. relay-0 or 0): it drains its connections over the window;',
  '                                with "replace", a new relay joins first, as in a rollout',
  '  kill-primary [stream]         FLEET_REDIS_CLUSTER=1: SIGKILL the primary serving the stream (default demo:ticks);',
  '                                its replica takes over within seconds',
  '  restart-nodes                 restart the cluster nodes killed so far (they rejoin as replicas)',
  '  status                        relays, providers and what ingest follows',
  '  help                          this list',
  '  quit                          stop everything (Ctrl-C does too)',
];

const bad = (message: string): ParsedFleetCommand => ({ ok: false, error: { code: 'bad_arguments', retryable: false, message } });

/** Parses one input line; anything it does not understand is a typed error with the usage. */
export function parseFleetCommand(line: string): ParsedFleetCommand {
  const [word, ...args] = line
    .trim()
    .split(/\s+/)
    .filter((w) => w !== '');
  if (word === undefined) return { ok: true, command: { op: 'nothing' } };
  const op = word.toLowerCase();
  switch (op) {
    case 'cut':
    case 'restore': {
      const [provider, only, ...rest] = args;
      if (provider === undefined || rest.length > 0 || (only !== undefined && only !== 'ws' && only !== 'http'))
        return bad(`usage: ${op} <provider> [ws|http]`);
      return { ok: true, command: only === undefined ? { op, provider } : { op, provider, only } };
    }
    case 'drain': {
      const [relay, flag, ...rest] = args;
      if (relay === undefined || rest.length > 0 || (flag !== undefined && flag !== 'replace'))
        return bad('usage: drain <relay> [replace]');
      return { ok: true, command: { op, relay, replace: flag === 'replace' } };
    }
    case 'kill-primary': {
      const [stream, ...rest] = args;
      if (rest.length > 0) return bad('usage: kill-primary [stream]');
      return { ok: true, command: stream === undefined ? { op } : { op, stream } };
    }
    case 'restart-nodes':
    case 'status':
    case 'help':
    case 'quit':
      if (args.length > 0) return bad(`${op} takes no arguments`);
      return { ok: true, command: { op } };
    case 'exit':
      return { ok: true, command: { op: 'quit' } };
    default:
      return {
        ok: false,
        error: { code: 'unknown_command', retryable: false, message: `unknown command "${word.slice(0, 40)}"; type "help" for the list` },
      };
  }
}
