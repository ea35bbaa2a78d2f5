import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { withDeadline } from '@streamgate/testkit';
import { useFleet } from './support/startFleet.js';

const getFleet = useFleet({ relays: 1 });

/** Sends a raw upgrade request and returns the response head (status line and headers). */
function upgrade(url: string, protocolHeader: string | null): Promise<string> {
  const { hostname, port, pathname } = new URL(url);
  const head = [
    `GET ${pathname} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    'Upgrade: websocket',
    'Connection: Upgrade',
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
    'Sec-WebSocket-Version: 13',
    ...(protocolHeader === null ? [] : [`Sec-WebSocket-Protocol: ${protocolHeader}`]),
    '',
    '',
  ].join('\r\n');
  const answer = new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(head));
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.destroy();
      resolve(text.slice(0, end));
    });
    socket.on('error', reject);
  });
  return withDeadline(answer, 10_000, 'the relay did not answer the upgrade');
}

const offered = (response: string): string[] =>
  response
    .split('\r\n')
    .filter((line) => /^sec-websocket-protocol:/i.test(line))
    .map((line) => line.slice(line.indexOf(':') + 1).trim());

describe('the WebSocket handshake', () => {
  it('echoes the first non-empty subprotocol token offered, trimmed, and none when none was offered', async () => {
    const url = getFleet().relays[0]?.url ?? '';
    const cases: Array<[string | null, string[]]> = [
      [null, []],
      ['', []],
      [',,,', []],
      [' , a', ['a']],
      ['a ,b', ['a']],
      ['streamgate', ['streamgate']],
    ];
    for (const [header, expected] of cases) {
      const response = await upgrade(url, header);
      expect(response.split('\r\n')[0]).toBe('HTTP/1.1 101 Switching Protocols');
      expect(`${JSON.stringify(header)} -> ${JSON.stringify(offered(response))}`).toBe(
        `${JSON.stringify(header)} -> ${JSON.stringify(expected)}`,
      );
    }
  });
});
