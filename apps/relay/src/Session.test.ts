import { describe, expect, it } from 'vitest';
import { CloseCode, PROTOCOL_VERSION } from '@streamgate/protocol';
import { waitFor } from '@streamgate/testkit';
import { Session } from './Session.js';
import { FakeConnection } from './testing/FakeConnection.js';
import { SessionHarness, sendFrame as send } from './testing/SessionHarness.js';
import { TestTokens } from './testing/TestTokens.js';

/** Waits for a frame with `op` (and `sid`, when given) to arrive after the first `after` frames. */
async function next(conn: FakeConnection, op: string, sid?: string, after = 0): Promise<Record<string, unknown>> {
  let found: Record<string, unknown> | undefined;
  await waitFor(
    () => {
      found = conn
        .records()
        .slice(after)
        .find((f) => f.op === op && (sid === undefined || f.sid === sid));
      return found !== undefined;
    },
    { timeoutMs: 5_000, message: `no ${op} frame${sid === undefined ? '' : ` for ${sid}`}; got ${conn.texts.join(' ')}` },
  );
  return found ?? {};
}

async function metric(h: SessionHarness, name: string, labels = ''): Promise<number> {
  const text = await h.metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels === '' ? ' ' : `{${labels}} `}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

describe('Session', () => {
  it('opens with welcome carrying the protocol version, the node and the limits', async () => {
    const h = await SessionHarness.create({ maxFrameBytes: 1_000, maxSubscriptions: 7 });
    const { conn } = h.open();
    expect(conn.frames).toEqual([
      { op: 'welcome', protocol: PROTOCOL_VERSION, node: 'relay-test', limits: { maxFrameBytes: 1_000, maxSubscriptions: 7 } },
    ]);
    expect(await metric(h, 'streamgate_relay_connections')).toBe(1);
  });

  it('subscribes live: subscribed (fresh), live, then every entry written after, in order', async () => {
    const h = await SessionHarness.create();
    h.source.appendData('orders', { n: 0 });
    const s = h.open();
    send(s.session, { op: 'subscribe', sid: 's1', token: await h.tokens.sign({ stream: 'orders' }) });
    await next(s.conn, 'live', 's1');
    expect(s.conn.ops().slice(1, 3)).toEqual(['subscribed', 'live']);
    expect(s.conn.frames[1]).toMatchObject({ sid: 's1', stream: 'orders', recovery: 'fresh' });
    h.clock.advanceSync(5);
    const ids = [h.source.appendData('orders', { n: 1 }), h.source.appendData('orders', { n: 2 })];
    await waitFor(() => s.conn.framesOf('event').length === 2, { timeoutMs: 5_000, message: 'events never arrived' });
    expect(s.conn.framesOf('event').map((e) => [e.id, e.data])).toEqual([
      [ids[0], { n: 1 }],
      [ids[1], { n: 2 }],
    ]);
    expect(await metric(h, 'streamgate_relay_subscriptions')).toBe(1);
  });

  it('resumes from a position: recovered, the backlog after it, then live', async () => {
    const h = await SessionHarness.create();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      h.clock.advanceSync(1);
      ids.push(h.source.appendData('prices', { i }));
    }
    const { conn, session } = h.open();
    send(session, { op: 'subscribe', sid: 'p', token: await h.tokens.sign({ stream: 'prices' }), from: ids[1] });
    await next(conn, 'live', 'p');
    expect(conn.frames[1]).toMatchObject({ op: 'subscribed', recovery: 'recovered', position: ids[1] });
    expect(conn.framesOf('event').map((e) => e.id)).toEqual(ids.slice(2));
    expect(conn.ops().at(-1)).toBe('live');
  });

  it('refuses a bad token with its code and the sid, counts it, and frees the sid', async () => {
    const h = await SessionHarness.create();
    const { conn, session } = h.open();
    send(session, { op: 'subscribe', sid: 'x', token: 'not.a.jwt' });
    expect(await next(conn, 'error', 'x')).toMatchObject({ code: 'token_malformed', retryable: false });
    send(session, { op: 'subscribe', sid: 'x', token: await h.tokens.sign({ stream: 'a', redis: 'redis://elsewhere:6379/0' }) });
    expect(await next(conn, 'error', 'x', 2)).toMatchObject({ code: 'redis_not_allowed' });
    send(session, { op: 'subscribe', sid: 'x', token: await h.tokens.sign({ stream: 'a' }) });
    await next(conn, 'subscribed', 'x');
    expect(await metric(h, 'streamgate_relay_auth_failures_total', 'reason="token_malformed"')).toBe(1);
    expect(await metric(h, 'streamgate_relay_frame_errors_total', 'code="redis_not_allowed"')).toBe(1);
  });

  it('answers frame errors with their codes and keeps serving', async () => {
    const h = await SessionHarness.create({ maxFrameBytes: 200 });
    const { conn, session } = h.open();
    send(session, 'not json');
    session.onBinary();
    send(session, { op: 'ping', pad: 'x'.repeat(300) });
    send(session, { op: 'launch' });
    send(session, { op: 'subscribe', sid: 'n' });
    send(session, { op: 'unsubscribe', sid: 'a', extra: 1 });
    send(session, { op: 'ping', t: 5 });
    send(session, { op: 'ping' });
    expect(conn.frames.slice(1).map((f) => (f.op === 'error' ? `${f.code}/${f.sid ?? '-'}/${f.retryable}` : JSON.stringify(f)))).toEqual([
      'frame_not_json/-/false',
      'frame_binary/-/false',
      'frame_too_large/-/false',
      'frame_unknown_op/-/false',
      'token_missing/n/false',
      'frame_invalid/a/false',
      '{"op":"pong","t":5}',
      '{"op":"pong"}',
    ]);
    expect(conn.framesOf('error')[2]?.message).toContain('exceeds the limit of 200');
    expect(await metric(h, 'streamgate_relay_limit_breaches_total', 'limit="frame_size"')).toBe(1);
    expect(await metric(h, 'streamgate_relay_auth_failures_total', 'reason="token_missing"')).toBe(1);
    expect(conn.closed).toBe(false);
  });

  it('enforces one sid, one stream and the subscription limit per socket', async () => {
    const h = await SessionHarness.create({ maxSubscriptions: 2 });
    const { conn, session } = h.open();
    send(session, { op: 'subscribe', sid: 'a', token: await h.tokens.sign({ stream: 's-a' }) });
    await next(conn, 'subscribed', 'a');
    send(session, { op: 'subscribe', sid: 'a', token: await h.tokens.sign({ stream: 's-b' }) });
    expect(await next(conn, 'error', 'a')).toMatchObject({ code: 'duplicate_subscription' });
    send(session, { op: 'subscribe', sid: 'b', token: await h.tokens.sign({ stream: 's-a' }) });
    expect(await next(conn, 'error', 'b')).toMatchObject({ code: 'duplicate_stream' });
    send(session, { op: 'subscribe', sid: 'b', token: await h.tokens.sign({ stream: 's-b' }) });
    await next(conn, 'subscribed', 'b');
    send(session, { op: 'subscribe', sid: 'c', token: await h.tokens.sign({ stream: 's-c' }) });
    expect(await next(conn, 'error', 'c')).toMatchObject({ code: 'too_many_subscriptions' });
    expect(await metric(h, 'streamgate_relay_limit_breaches_total', 'limit="subscriptions"')).toBe(1);
  });

  it('unsubscribes: unsubscribed (client), no more events, and unknown sids are refused', async () => {
    const h = await SessionHarness.create();
    const { conn, session } = h.open();
    send(session, { op: 'subscribe', sid: 'u', token: await h.tokens.sign({ stream: 'u' }) });
    await next(conn, 'live', 'u');
    send(session, { op: 'unsubscribe', sid: 'u' });
    expect(conn.frames.at(-1)).toEqual({ op: 'unsubscribed', sid: 'u', reason: 'client' });
    expect(conn.topics.size).toBe(0);
    h.source.appendData('u', { late: true });
    await h.source.settled();
    expect(conn.framesOf('event')).toEqual([]);
    send(session, { op: 'unsubscribe', sid: 'u' });
    expect(conn.frames.at(-1)).toMatchObject({ op: 'error', sid: 'u', code: 'unknown_subscription' });
    expect(await metric(h, 'streamgate_relay_subscriptions')).toBe(0);
  });

  it('lets an unsubscribe cancel a subscribe whose token is still being checked: one unsubscribed, nothing else', async () => {
    const h = await SessionHarness.create();
    const { conn, session } = h.open();
    send(session, { op: 'subscribe', sid: 'c', token: await h.tokens.sign({ stream: 'c' }) });
    send(session, { op: 'unsubscribe', sid: 'c' });
    send(session, { op: 'ping', t: 1 });
    await next(conn, 'pong');
    // Give the token check time to finish: its result must be dropped.
    send(session, { op: 'subscribe', sid: 'd', token: await h.tokens.sign({ stream: 'd' }) });
    await next(conn, 'live', 'd');
    expect(conn.frames.filter((f) => 'sid' in f && f.sid === 'c')).toEqual([{ op: 'unsubscribed', sid: 'c', reason: 'client' }]);
  });

  it('refreshes in place and refuses a token for another stream or subject, keeping the old one', async () => {
    const h = await SessionHarness.create();
    const { conn, session } = h.open();
    const nowS = Math.floor(h.clock.now() / 1000);
    send(session, { op: 'subscribe', sid: 'r', token: await h.tokens.sign({ stream: 'r', exp: nowS + 120 }) });
    await next(conn, 'live', 'r');
    send(session, { op: 'refresh', sid: 'r', token: await h.tokens.sign({ stream: 'other' }) });
    expect(await next(conn, 'error', 'r')).toMatchObject({ code: 'token_stream_mismatch' });
    let seen = conn.texts.length;
    send(session, { op: 'refresh', sid: 'r', token: await h.tokens.sign({ stream: 'r', sub: 'mallory' }) });
    expect(await next(conn, 'error', 'r', seen)).toMatchObject({ code: 'token_subject_mismatch' });
    seen = conn.texts.length;
    send(session, { op: 'refresh', sid: 'r', token: 'garbage' });
    expect(await next(conn, 'error', 'r', seen)).toMatchObject({ code: 'token_malformed' });
    send(session, { op: 'refresh', sid: 'r', token: await h.tokens.sign({ stream: 'r', exp: nowS + 900 }) });
    expect(await next(conn, 'refreshed', 'r')).toEqual({ op: 'refreshed', sid: 'r', exp: nowS + 900 });
    send(session, { op: 'refresh', sid: 'nobody', token: await h.tokens.sign({ stream: 'r' }) });
    expect(await next(conn, 'error', 'nobody')).toMatchObject({ code: 'unknown_subscription' });
    expect(await metric(h, 'streamgate_relay_token_refreshes_total', 'outcome="refused"')).toBe(3);
    expect(await metric(h, 'streamgate_relay_token_refreshes_total', 'outcome="ok"')).toBe(1);
    // The old expiry no longer applies: the subscription outlives it.
    h.clock.advanceSync(200_000);
    expect(conn.framesOf('unsubscribed')).toEqual([]);
  });

  it('applies a refresh sent right behind its subscribe once the subscribe is checked, and refuses one whose subscribe was refused', async () => {
    const h = await SessionHarness.create();
    const { conn, session } = h.open();
    const nowS = Math.floor(h.clock.now() / 1000);
    const first = await h.tokens.sign({ stream: 'q', exp: nowS + 120 });
    const second = await h.tokens.sign({ stream: 'q', exp: nowS + 900 });
    // Both frames arrive before the subscribe's token check has finished.
    send(session, { op: 'subscribe', sid: 'q', token: first });
    send(session, { op: 'refresh', sid: 'q', token: second });
    expect(await next(conn, 'refreshed', 'q')).toEqual({ op: 'refreshed', sid: 'q', exp: nowS + 900 });
    await next(conn, 'live', 'q');
    expect(conn.framesOf('error')).toEqual([]);
    // The refreshed token is in force: the first one's expiry passes and the subscription stays.
    h.clock.advanceSync(200_000);
    expect(conn.framesOf('unsubscribed')).toEqual([]);

    send(session, { op: 'subscribe', sid: 'bad', token: 'not.a.jwt' });
    send(session, { op: 'refresh', sid: 'bad', token: second });
    expect(await next(conn, 'error', 'bad')).toMatchObject({ code: 'token_malformed' });
    await waitFor(() => conn.framesOf('error').length === 2, { timeoutMs: 5_000, message: 'the refresh was never answered' });
    expect(conn.framesOf('error').map((f) => [f.sid, f.code])).toEqual([
      ['bad', 'token_malformed'],
      ['bad', 'unknown_subscription'],
    ]);
  });

  it('ends a subscription at once with stream_moved when its refresh names the stream on another target', async () => {
    const h = await SessionHarness.create();
    const { conn, session } = h.open();
    send(session, { op: 'subscribe', sid: 'm', token: await h.tokens.sign({ stream: 'm' }) });
    await next(conn, 'live', 'm');
    send(session, { op: 'refresh', sid: 'm', token: await h.tokens.sign({ stream: 'm', redis: TestTokens.OTHER_REDIS }) });
    expect(await next(conn, 'unsubscribed', 'm')).toEqual({ op: 'unsubscribed', sid: 'm', reason: 'stream_moved' });
    expect(conn.framesOf('error')).toEqual([]);
    expect(await metric(h, 'streamgate_relay_token_refreshes_total', 'outcome="moved"')).toBe(1);
    expect(await metric(h, 'streamgate_relay_subscriptions')).toBe(0);
  });

  it('asks for a refresh before exp and ends the subscription with token_expired when none came', async () => {
    const h = await SessionHarness.create({ clockSkewSeconds: 0 });
    const { conn, session } = h.open();
    const nowS = Math.floor(h.clock.now() / 1000);
    send(session, { op: 'subscribe', sid: 'e', token: await h.tokens.sign({ stream: 'e', iat: nowS, exp: nowS + 300 }) });
    await next(conn, 'live', 'e');
    h.clock.advanceToSync((nowS + 300) * 1000 - 1);
    expect(conn.framesOf('refresh_token')).toEqual([{ op: 'refresh_token', sid: 'e', exp: nowS + 300 }]);
    expect(conn.framesOf('unsubscribed')).toEqual([]);
    h.clock.advanceSync(1);
    expect(conn.frames.at(-1)).toEqual({ op: 'unsubscribed', sid: 'e', reason: 'token_expired' });
    expect(await metric(h, 'streamgate_relay_token_refreshes_total', 'outcome="expired"')).toBe(1);
    expect(h.clock.pending).toBe(0);
  });

  it('keeps a token that lives longer than a timer can wait, re-arming instead of expiring it early', async () => {
    const h = await SessionHarness.create({ clockSkewSeconds: 0 });
    const { conn, session } = h.open();
    const nowS = Math.floor(h.clock.now() / 1000);
    const exp = nowS + 40 * 86_400;
    send(session, { op: 'subscribe', sid: 'long', token: await h.tokens.sign({ stream: 'long', iat: nowS, exp }) });
    await next(conn, 'live', 'long');
    h.clock.advanceSync(30 * 86_400_000);
    expect(conn.framesOf('unsubscribed')).toEqual([]);
    h.clock.advanceToSync(exp * 1000);
    expect(conn.framesOf('refresh_token')).toHaveLength(1);
    expect(conn.frames.at(-1)).toEqual({ op: 'unsubscribed', sid: 'long', reason: 'token_expired' });
  });

  it('tells the client when the hub ends a subscription, and frees its stream', async () => {
    const h = await SessionHarness.create();
    const { conn, session } = h.open();
    h.source.appendData('w', { v: 1 });
    send(session, { op: 'subscribe', sid: 'w', token: await h.tokens.sign({ stream: 'w' }) });
    await next(conn, 'live', 'w');
    h.source.setWrongType('w');
    expect(await next(conn, 'unsubscribed', 'w')).toEqual({ op: 'unsubscribed', sid: 'w', reason: 'stream_unavailable' });
    expect(await metric(h, 'streamgate_relay_subscriptions')).toBe(0);
  });

  it('answers stream_unavailable with the sid when the first read fails, and the sid can be used again', async () => {
    const h = await SessionHarness.create();
    const { conn, session } = h.open();
    h.source.setHealthy(false);
    send(session, { op: 'subscribe', sid: 'f', token: await h.tokens.sign({ stream: 'f' }), from: '1-0' });
    expect(await next(conn, 'error', 'f')).toMatchObject({ code: 'stream_unavailable', retryable: true });
    h.source.setHealthy(true);
    send(session, { op: 'subscribe', sid: 'f', token: await h.tokens.sign({ stream: 'f' }), from: '1-0' });
    expect(await next(conn, 'subscribed', 'f')).toMatchObject({ recovery: 'reset' });
  });

  it('leaves out of the drain notice a subscription whose first read has not answered: it has no position yet', async () => {
    const h = await SessionHarness.create();
    const { conn, session } = h.open();
    h.source.appendData('d2', { v: 1 });
    const release = h.source.holdReads();
    const inspected = h.source.reads.inspect;
    send(session, { op: 'subscribe', sid: 'early', token: await h.tokens.sign({ stream: 'd2' }) });
    // The token passed and the hub asked Redis; nothing has answered, so the client has no `subscribed`.
    await waitFor(() => h.source.reads.inspect > inspected, { timeoutMs: 5_000, message: 'the hub never read d2' });
    expect(conn.framesOf('subscribed')).toEqual([]);
    session.drain(10, 10);
    expect(conn.frames.at(-1)).toMatchObject({ op: 'reconnect', positions: [] });
    release();
  });

  it('drains: one reconnect frame with every position, then close 4000; nothing after', async () => {
    const h = await SessionHarness.create();
    const { conn, session } = h.open();
    const id = h.source.appendData('d1', { v: 1 });
    send(session, { op: 'subscribe', sid: 'd1', token: await h.tokens.sign({ stream: 'd1' }), from: '0-0' });
    await next(conn, 'live', 'd1');
    send(session, { op: 'subscribe', sid: 'pending', token: await h.tokens.sign({ stream: 'd2' }) });
    session.drain(1234, 1200);
    expect(conn.frames.at(-1)).toEqual({
      op: 'reconnect',
      reason: 'drain',
      positions: [{ sid: 'd1', stream: 'd1', id }],
      sinceDrainMs: 1234,
      dueMs: 1200,
    });
    expect(conn.closedWith?.code).toBe(CloseCode.drainReconnect);
    const count = conn.texts.length;
    session.drain(2000, 2000);
    expect(conn.texts.length).toBe(count);
    expect(await metric(h, 'streamgate_relay_drain_notices_total')).toBe(1);
    expect(await metric(h, 'streamgate_relay_subscriptions')).toBe(0);
    expect(await metric(h, 'streamgate_relay_connections')).toBe(0);
  });

  it('releases everything when the socket goes, including a subscribe still being checked', async () => {
    const h = await SessionHarness.create();
    const { conn, session } = h.open();
    send(session, { op: 'subscribe', sid: 'a', token: await h.tokens.sign({ stream: 'gone-a' }) });
    await next(conn, 'live', 'a');
    send(session, { op: 'subscribe', sid: 'b', token: await h.tokens.sign({ stream: 'gone-b' }) });
    conn.disconnect();
    // The edge may report a close twice (refused in onOpen, then closed): the second is a no-op.
    session.onClose();
    await waitFor(async () => (await metric(h, 'streamgate_relay_subscriptions')) === 0, {
      timeoutMs: 5_000,
      message: 'subscriptions not released',
    });
    // The late token check of `b` must not create a subscription on a closed socket.
    send(session, { op: 'ping' });
    expect(conn.framesOf('subscribed').map((f) => f.sid)).toEqual(['a']);
    expect(h.clock.pending).toBe(0);
    // The stream lingers (0 ms here), then the source stops reading it.
    await waitFor(() => !h.source.isWatched('gone-a'), {
      timeoutMs: 5_000,
      message: 'stream still watched after its last subscriber left',
    });
  });

  it('closes a socket with 4400 after 100 unusable frames in a row, and only then', async () => {
    const h = await SessionHarness.create();
    const { conn, session } = h.open();
    const garbage = ['nope', '{"op":"launch"}', '[1]', '{"op":"ping","t":"x"}'];
    for (let i = 0; i < 99; i++) send(session, garbage[i % garbage.length] ?? '');
    // Any usable frame ends the run, including one refused for its token.
    send(session, { op: 'subscribe', sid: 'n' });
    for (let i = 0; i < 98; i++) send(session, 'nope');
    session.onBinary();
    send(session, { op: 'ping' });
    expect(conn.closed).toBe(false);
    for (let i = 0; i < 99; i++) send(session, 'nope');
    expect(conn.closed).toBe(false);
    session.onBinary();
    expect(conn.closedWith?.code).toBe(CloseCode.protocolViolation);
    // Every refused frame got its answer, the last one included, and nothing came after the close.
    expect(conn.framesOf('error')).toHaveLength(99 + 1 + 99 + 100);
    send(session, 'nope');
    expect(conn.framesOf('error')).toHaveLength(299);
    expect(await metric(h, 'streamgate_relay_limit_breaches_total', 'limit="protocol_violation"')).toBe(1);
  });

  it('takes the plain pong, which skips parsing, as a usable frame: no answer, and it ends a run', async () => {
    const h = await SessionHarness.create();
    const { conn, session } = h.open();
    for (let i = 0; i < 99; i++) send(session, 'nope');
    send(session, '{"op":"pong"}');
    for (let i = 0; i < 99; i++) send(session, 'nope');
    expect(conn.closed).toBe(false);
    expect(conn.framesOf('error')).toHaveLength(198);
    // Spelt another way it is parsed, and still answered with nothing.
    send(session, '{ "op": "pong" }');
    send(session, '{"op":"pong","t":1}');
    expect(conn.framesOf('error')).toHaveLength(199);
    expect(conn.closed).toBe(false);
  });

  it('closes with 4005 after an internal error frame when serving a frame faults, releasing the socket', async () => {
    const h = await SessionHarness.create();
    const conn = new FakeConnection(h.publisher);
    const session = new Session(conn, {
      ...h.deps,
      hubFor: () => {
        throw new Error('no hub for this target');
      },
    });
    conn.onClose(() => session.onClose());
    session.open();
    send(session, { op: 'subscribe', sid: 'boom', token: await h.tokens.sign({ stream: 'boom' }) });
    await waitFor(() => conn.closed, { timeoutMs: 5_000, message: 'socket never closed' });
    expect(conn.closedWith?.code).toBe(CloseCode.internalError);
    expect(conn.frames.at(-1)).toMatchObject({ op: 'error', code: 'internal', retryable: true });
    expect(await metric(h, 'streamgate_relay_frame_errors_total', 'code="internal"')).toBe(1);
    expect(await metric(h, 'streamgate_relay_connections')).toBe(0);
  });

  it('echoes ping t exactly as sent', async () => {
    const h = await SessionHarness.create();
    const { conn, session } = h.open();
    const ts = ['7', '1700000000123', '18446744073709551616', '1.50', '-0', '1e3', '2.5E-7'];
    for (const t of ts) send(session, `{"op":"ping","t":${t}}`);
    send(session, '{ "t" : 1 , "op":"ping", "t" : 12345678901234567890 }');
    expect(conn.texts.slice(1)).toEqual([...ts.map((t) => `{"op":"pong","t":${t}}`), '{"op":"pong","t":12345678901234567890}']);
    expect(conn.frames.slice(1).every((f) => f.op === 'pong')).toBe(true);
  });

  it('keeps a live subscription until exp plus the clock skew, the moment its token would be refused', async () => {
    const h = await SessionHarness.create({ clockSkewSeconds: 30 });
    const { conn, session } = h.open();
    const nowS = Math.floor(h.clock.now() / 1000);
    send(session, { op: 'subscribe', sid: 'k', token: await h.tokens.sign({ stream: 'k', iat: nowS, exp: nowS + 120 }) });
    await next(conn, 'live', 'k');
    h.clock.advanceToSync((nowS + 120 + 30) * 1000 - 1);
    expect(conn.framesOf('refresh_token').map((f) => f.sid)).toEqual(['k']);
    expect(conn.framesOf('unsubscribed')).toEqual([]);
    h.clock.advanceSync(1);
    expect(conn.frames.at(-1)).toEqual({ op: 'unsubscribed', sid: 'k', reason: 'token_expired' });
  });

  it('answers a subscribe or refresh without token as token_missing, whatever else is wrong with it', async () => {
    const h = await SessionHarness.create();
    const { conn, session } = h.open();
    send(session, { op: 'subscribe', sid: 'bad sid!', from: 'later' });
    send(session, { op: 'refresh', sid: 'r1', token: '', extra: true });
    send(session, { op: 'subscribe', sid: 's1', token: 5 });
    expect(conn.frames.slice(1).map((f) => (f.op === 'error' ? `${f.code}/${f.sid ?? '-'}` : f.op))).toEqual([
      'token_missing/-',
      'token_missing/r1',
      'frame_invalid/s1',
    ]);
  });
});
