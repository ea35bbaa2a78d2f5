import type { Redis } from 'ioredis';
import type { StreamName } from '@streamgate/protocol';
import type { NodeSubscriber } from './ClusterPubSub.js';

/** A NodeSubscriber over one plain ioredis connection, created with `autoResubscribe: false`. */
export class IoredisNodeSubscriber implements NodeSubscriber {
  constructor(
    private readonly connection: Redis,
    private readonly prefix: string,
    onEvent: (key: StreamName, event: string) => void,
  ) {
    connection.on('message', (channel: string, message: string) => {
      if (channel.startsWith(prefix)) onEvent(channel.slice(prefix.length), message);
    });
  }

  get subscriberReady(): boolean {
    return this.connection.status === 'ready';
  }

  async subscribe(keys: readonly StreamName[]): Promise<void> {
    await this.connection.subscribe(...keys.map((k) => this.prefix + k));
  }

  async unsubscribe(keys: readonly StreamName[]): Promise<void> {
    await this.connection.unsubscribe(...keys.map((k) => this.prefix + k));
  }

  onReady(listener: () => void): void {
    this.connection.on('ready', listener);
  }

  onClose(listener: () => void): void {
    this.connection.on('close', listener);
  }

  disconnect(): void {
    this.connection.disconnect();
  }
}
