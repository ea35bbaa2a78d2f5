import { spawnRelay, waitFor } from '@streamgate/testkit';
import type { RelayProcess } from '@streamgate/testkit';
import type { RelayFrontDoor } from './relayFrontDoor.js';

export type FleetRelayState = 'serving' | 'draining' | 'exited';

export interface FleetRelay extends RelayProcess {
  readonly name: string;
  readonly state: FleetRelayState;
}

/** What an operator action did, or why it did nothing (bad input never throws). */
export type FleetAction =
  | { ok: true; message: string }
  | {
      ok: false;
      code: 'unknown_provider' | 'unknown_relay' | 'relay_not_serving' | 'last_relay' | 'not_a_cluster' | 'no_primary';
      retryable: false;
      message: string;
    };

export interface FleetRelayPoolOptions {
  frontDoor: RelayFrontDoor;
  /** Everything spawnRelay needs but the name. */
  spawn: Omit<Parameters<typeof spawnRelay>[0], 'name' | 'env'>;
  /** Env of relay `name` (ops stream, pod name, drain window…). */
  env: (name: string) => Record<string, string>;
  log: (line: string) => void;
}

type Entry = { relay: RelayProcess; name: string; state: FleetRelayState };

function refused(code: Extract<FleetAction, { ok: false }>['code'], message: string): FleetAction {
  return { ok: false, code, retryable: false, message };
}

/**
 * The fleet's relay pods, `relay-0`, `relay-1`, …: starts them, keeps the front door's backends
 * to the serving ones, and drains one the way a rollout does (out of the backends, then SIGTERM;
 * with `replace`, a new pod joins first, as with maxSurge 1).
 */
export class FleetRelayPool {
  readonly #entries: Entry[] = [];
  #stopping = false;
  #started = 0;

  constructor(private readonly options: FleetRelayPoolOptions) {}

  /** In start order (pods booted together register in whichever order they became ready). */
  get relays(): FleetRelay[] {
    const order = (name: string) => Number(name.slice('relay-'.length));
    return this.#entries.map((e) => ({ ...e.relay, name: e.name, state: e.state })).sort((a, b) => order(a.name) - order(b.name));
  }

  /** By name (`relay-0`) or index (`0`). */
  find(id: string): FleetRelay | undefined {
    const name = /^\d+$/.test(id) ? `relay-${id}` : id;
    return this.relays.find((r) => r.name === name);
  }

  async start(): Promise<FleetRelay> {
    const name = `relay-${this.#started++}`;
    const relay = await spawnRelay({ ...this.options.spawn, name, env: this.options.env(name) });
    const entry: Entry = { relay, name, state: 'serving' };
    this.#entries.push(entry);
    void relay.service.exited.then((status) => {
      const was = entry.state;
      entry.state = 'exited';
      this.#updateBackends();
      if (this.#stopping) return;
      const how = status.signal === null ? `code ${String(status.code)}` : `signal ${status.signal}`;
      this.options.log(`${name} exited (${how})${was === 'draining' ? ' after draining' : ', unexpectedly'}`);
    });
    await waitFor(async () => (await fetch(`${relay.httpUrl}/readyz`)).status === 200, {
      timeoutMs: 20_000,
      message: `${name} never became ready`,
    });
    this.#updateBackends();
    return { ...relay, name, state: entry.state };
  }

  async drain(id: string, options: { replace?: boolean } = {}): Promise<FleetAction> {
    const name = /^\d+$/.test(id) ? `relay-${id}` : id;
    const entry = this.#entries.find((e) => e.name === name);
    const known = this.#entries.map((e) => e.name).join(', ');
    if (entry === undefined) return refused('unknown_relay', `no relay "${id}" (relays: ${known})`);
    if (entry.state !== 'serving') return refused('relay_not_serving', `${name} is ${entry.state}, not serving`);
    const others = this.#entries.filter((e) => e !== entry && e.state === 'serving');
    let replacement = '';
    if (options.replace === true) {
      replacement = ` and started ${(await this.start()).name} in its place`;
    } else if (others.length === 0) {
      return refused('last_relay', `${name} is the last serving relay; "drain ${name} replace" starts a new one first`);
    }
    entry.state = 'draining';
    this.#updateBackends();
    entry.relay.service.signal('SIGTERM');
    return { ok: true, message: `SIGTERM sent to ${name} (draining; no new connections reach it)${replacement}` };
  }

  async stop(timeoutMs: number): Promise<void> {
    this.#stopping = true;
    this.options.frontDoor.setBackends([]);
    await Promise.allSettled(this.#entries.map((e) => e.relay.service.stop(timeoutMs)));
  }

  #updateBackends(): void {
    this.options.frontDoor.setBackends(this.#entries.filter((e) => e.state === 'serving').map((e) => e.relay.port));
  }
}
