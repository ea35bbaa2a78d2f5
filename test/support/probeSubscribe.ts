import type { ServerFrame } from '@streamgate/protocol';
import { openRawSocket } from './rawSocket.js';

/** Subscribes once with `token` on a bare socket and returns the relay's answer: `subscribed` or `error`. */
export async function probeSubscribe(url: string, token: string): Promise<ServerFrame> {
  const socket = await openRawSocket(url);
  try {
    socket.send(JSON.stringify({ op: 'subscribe', sid: 'probe', token }));
    return await socket.next((f) => (f.op === 'subscribed' || f.op === 'error') && f.sid === 'probe', 10_000);
  } finally {
    socket.close();
  }
}
