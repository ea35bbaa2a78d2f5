import { useState } from 'react';
import type { ReactNode } from 'react';
import { useSubscriptionRelay } from '@streamgate/react';
import type { Tick } from './router.js';
import { trpc } from './trpc.js';

export function Ticker({ stream }: { stream: string }): ReactNode {
  const [ticks, setTicks] = useState<Tick[]>([]);
  const { state } = useSubscriptionRelay({
    useQuery: trpc.demo.token,
    input: { stream },
    // `tick` is a Tick, inferred from the router: no annotation, no cast.
    onSubscriptionData: (tick) => setTicks((previous) => [...previous, tick]),
  });
  useSubscriptionRelay({
    useQuery: trpc.demo.token,
    input: { stream },
    // @ts-expect-error the payload is a Tick, so a callback taking a string does not fit
    onSubscriptionData: (text: string) => text.length,
  });
  return (
    <section>
      <p>{state}</p>
      <ol>
        {ticks.map((tick) => (
          <li key={tick.seq}>{tick.text}</li>
        ))}
      </ol>
    </section>
  );
}
