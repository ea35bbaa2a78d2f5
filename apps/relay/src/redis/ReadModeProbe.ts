import type { RedisClient } from '@streamgate/redis';
import { isClusterClient } from '@streamgate/redis';
import { primariesWithoutNotify } from './clusterNotifySetting.js';
import type { ReadMode } from './LiveReader.js';
import { readModeReply } from './readModeReply.js';
import { redisFailure, toError } from './redisFailure.js';

export interface ReadModeProbeOptions {
  /** The source's command connection. */
  readonly command: RedisClient;
  readonly onError: (error: Error) => void;
  /** A Redis Cluster: the primaries lacking K or t, each time that set changes. */
  readonly onNodesWithoutNotify?: (nodes: readonly string[]) => void;
}

/** Asks a target which read mode its notification setting allows (ReadModeSwitch's probe). */
export class ReadModeProbe {
  /** A Redis Cluster's primaries found without notifications, as last told. */
  private withoutNotify = '';

  constructor(private readonly options: ReadModeProbeOptions) {}

  /**
   * Whether the server notifies for stream keys. A server that refuses CONFIG (a managed Redis,
   * a Redis-compatible one) cannot be known to notify, so it is read in batches; one that cannot
   * be reached now keeps the mode in force until the next look. A Redis Cluster is always
   * `notify`: each primary is asked, and the ones that do not notify are only reported (the
   * sweep reads every key every 5 s meanwhile: SweepSchedule).
   */
  readonly probe = async (): Promise<ReadMode | null> => {
    const command = this.options.command;
    if (!(await this.commandReady(2_000))) return null;
    if (isClusterClient(command)) {
      const without = await primariesWithoutNotify(command, this.options.onError);
      if (without === null) return null;
      if (without.join(',') !== this.withoutNotify) {
        this.withoutNotify = without.join(',');
        this.options.onNodesWithoutNotify?.(without);
      }
      return 'notify';
    }
    try {
      return readModeReply(await command.call('CONFIG', ['GET', 'notify-keyspace-events']));
    } catch (thrown) {
      const error = toError(thrown);
      this.options.onError(error);
      return redisFailure(error).kind === 'reply' ? 'batch' : null;
    }
  };

  /** At boot the command connection is still connecting: the first look waits for it, briefly. */
  private commandReady(timeoutMs: number): Promise<boolean> {
    const command = this.options.command;
    if (command.status === 'ready') return Promise.resolve(true);
    return new Promise((resolve) => {
      const onReady = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        command.off('ready', onReady);
        resolve(false);
      }, timeoutMs);
      command.once('ready', onReady);
    });
  }
}
