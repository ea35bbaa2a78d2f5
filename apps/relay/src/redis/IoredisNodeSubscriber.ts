import type { Redis } from 'ioredis';
import type { StreamName } from '@streamgate/protocol';
import type { NodeSubscriber } from './ClusterPubSub.js';
import { guardHandler } from './guardHandler.js';

/**
 * A NodeSubscriber over one plain ioredis connection, created with `autoResubscribe: false`. Its
 * listeners run inside ioredis event handlers: what they throw goes to `onHandlerError`.
 */
export class IoredisNodeSubscriber implements NodeSubscriber {
  constructor(
    private readonly connection: Redis,
    private readonly prefix: string,
    onEvent: (key: StreamName, event: string) => void,
    private readonly onHandlerError: (error: Error) => void,
  ) {
    connection.on(
      'message',
      guardHandler((channel: string, message: string) => {
        if (channel.startsWith(prefix)) onEvent(channel.slice(prefix.length), message);
      }, onHandlerError),
    );
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
    this.connection.on('ready', guardHandler(listener, this.onHandlerError));
  }

  onClose(listener: () => void): void {
    this.connection.on('close', guardHandler(listener, this.onHandlerError));
  }

  disconnect(): void {
    this.connection.disconnect();
  }
}
