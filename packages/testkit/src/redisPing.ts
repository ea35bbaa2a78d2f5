import { connect } from 'node:net';

/**
 * True when a Redis server on 127.0.0.1:`port` answers PING with PONG. Speaks RESP over a raw
 * socket rather than through ioredis, whose reconnect logic would hide a server that is not there.
 */
export function redisPing(port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
    // A refused or reset connection is the answer "not (yet) serving", not a fault to report.
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
  });
}
