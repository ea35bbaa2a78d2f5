import { useState } from 'react';
import { useRelayClient } from '@streamgate/react';
import { useSubscriptionRelay } from '@streamgate/react/tanstack';
import { useTRPC } from './trpc.js';

/** The stream `npm run fleet` publishes to (`demo:ticks`, one event every 500 ms). */
const STREAM = 'ticks';
/** Older events scroll away; the counters below still cover every event received. */
const SHOWN = 500;

interface Tick {
  seq: number;
  id: string;
  /** The relay the event came through. */
  via: string;
}

interface Continuity {
  received: number;
  gaps: number;
  duplicates: number;
  lastSeq: number | undefined;
}

const START: Continuity = { received: 0, gaps: 0, duplicates: 0, lastSeq: undefined };

/** The publisher numbers events 0, 1, 2…: a jump is a gap, a repeat (or step back) a duplicate. */
function advance(c: Continuity, seq: number): Continuity {
  const expected = c.lastSeq === undefined ? seq : c.lastSeq + 1;
  return {
    received: c.received + 1,
    gaps: c.gaps + (seq > expected ? 1 : 0),
    duplicates: c.duplicates + (seq < expected ? 1 : 0),
    lastSeq: Math.max(seq, c.lastSeq ?? seq),
  };
}

export function Ticks() {
  const trpc = useTRPC();
  const relay = useRelayClient();
  const [ticks, setTicks] = useState<Tick[]>([]);
  const [continuity, setContinuity] = useState<Continuity>(START);
  const [notice, setNotice] = useState<string | undefined>(undefined);

  const { state, error, position } = useSubscriptionRelay({
    // The useTRPC() procedure: the hook fetches each token through the QueryClient.
    queryOptions: trpc.demo.token,
    input: { stream: STREAM, user: 'example-app' },
    // `event` is the stream's payload type ({ seq, text, at }), inferred from the procedure.
    onSubscriptionData: (event, meta) => {
      setTicks((previous) => [...previous, { seq: event.seq, id: meta.id, via: relay.url }].slice(-SHOWN));
      setContinuity((c) => advance(c, event.seq));
    },
    onRecovery: (info) => setNotice(`resumed with a gap (${info.recovery}): events after ${info.previousPosition ?? 'the start'} are lost`),
    onReset: () => setNotice('the stream was recreated: numbering starts again'),
  });

  return (
    <main>
      <header>
        <h1>demo:{STREAM}</h1>
        <dl>
          <dt>subscription</dt>
          <dd data-testid="state">{state}</dd>
          <dt>relay</dt>
          <dd data-testid="relay">{relay.url}</dd>
          <dt>position</dt>
          <dd data-testid="position">{position ?? '—'}</dd>
          <dt>received</dt>
          <dd data-testid="received">{continuity.received}</dd>
          <dt>gaps / duplicates</dt>
          <dd data-testid="continuity" className={continuity.gaps + continuity.duplicates > 0 ? 'problem' : undefined}>
            {continuity.gaps} / {continuity.duplicates}
          </dd>
        </dl>
        {error === undefined ? null : (
          <p className="problem" data-testid="error">
            {error.code}: {error.message}
          </p>
        )}
        {notice === undefined ? null : <p className="problem">{notice}</p>}
      </header>
      <ol data-testid="ticks">
        {ticks.map((tick, i) => {
          // Marks where the client moved to another relay (it resumed from its last id there).
          const handover = i > 0 && ticks[i - 1]?.via !== tick.via;
          return (
            <li key={tick.id} data-seq={tick.seq} data-via={tick.via} className={handover ? 'handover' : undefined}>
              seq {tick.seq} <span>{tick.id}</span>
              {handover ? <b> now via {tick.via}</b> : null}
            </li>
          );
        })}
      </ol>
    </main>
  );
}
