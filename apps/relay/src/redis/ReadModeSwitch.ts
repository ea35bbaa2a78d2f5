import type { StreamId, StreamName } from '@streamgate/protocol';
import type { LiveReader, ReadMode } from './LiveReader.js';
import { sleepOn } from '@streamgate/protocol';
import type { Clock } from '@streamgate/protocol';

/** `auto`: notification-driven where the server notifies, else batched; the others force one. */
export type RequestedReadMode = 'auto' | 'notify' | 'batch';

export interface ReadModeSwitchOptions {
  readonly requested: RequestedReadMode;
  /** What the server allows now; null when it could not be asked (the mode in force stays). */
  readonly probe: () => Promise<ReadMode | null>;
  readonly create: (mode: ReadMode, positions: ReadonlyArray<readonly [StreamName, StreamId]>) => LiveReader;
  readonly clock: Clock;
  /** How often the server's setting is looked at again. */
  readonly checkIntervalMs: number;
  /** The mode was chosen (previous null) or changed. */
  readonly onMode: (mode: ReadMode, previous: ReadMode | null) => void;
  /** The reader built before the first answer. Default `batch`: it works on any server. */
  readonly initial?: ReadMode;
}

/**
 * Holds the live reader in force and swaps it when the server's notification setting changes,
 * either way, at runtime. The swap takes the old reader's positions and stops it in the same
 * tick, so the new one reads every entry after them: none lost, none twice.
 */
export class ReadModeSwitch {
  private current: LiveReader;
  private inForce: ReadMode;
  private decided = false;
  private running = true;
  private wakeStop: () => void = () => undefined;
  /** Settles with the first answer of the server (null if it could not be asked). */
  readonly firstCheck: Promise<ReadMode | null>;

  constructor(private readonly options: ReadModeSwitchOptions) {
    this.inForce = options.initial ?? 'batch';
    this.current = options.create(this.inForce, []);
    if (options.requested === 'batch') {
      this.decide('batch');
      this.firstCheck = Promise.resolve('batch');
      return;
    }
    this.firstCheck = this.check();
    void this.loop();
  }

  get reader(): LiveReader {
    return this.current;
  }

  get mode(): ReadMode {
    return this.inForce;
  }

  /** Asks the server once and switches if its answer differs from the mode in force. */
  async check(): Promise<ReadMode | null> {
    const allowed = await this.options.probe();
    if (!this.running) return allowed;
    // Unknown before any answer: the batched reader works on any server, so it is the one logged.
    this.decide(allowed ?? this.inForce);
    return allowed;
  }

  async close(): Promise<void> {
    this.running = false;
    this.wakeStop();
    await this.current.close();
  }

  private decide(mode: ReadMode): void {
    const previous = this.decided ? this.inForce : null;
    if (this.decided && mode === this.inForce) return;
    if (mode !== this.inForce) {
      const positions = this.current.positions();
      void this.current.close();
      this.current = this.options.create(mode, positions);
      this.inForce = mode;
    }
    this.decided = true;
    this.options.onMode(mode, previous);
  }

  private async loop(): Promise<void> {
    const stopped = new Promise<void>((resolve) => (this.wakeStop = resolve));
    await this.firstCheck;
    while (this.running) {
      await Promise.race([sleepOn(this.options.clock, this.options.checkIntervalMs), stopped]);
      if (this.running) await this.check();
    }
  }
}
