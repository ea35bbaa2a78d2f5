import type { IngestSnapshot } from '@streamgate/ops';
import type { PodState } from '../model/podState.js';
import { ChainStreamTable } from './ChainStreamTable.js';
import { Field } from './Field.js';
import { PodCard } from './PodCard.js';
import { VenueTable } from './VenueTable.js';

export function IngestCard({ snapshot, missed, state, now }: { snapshot: IngestSnapshot; missed: number; state: PodState; now: number }) {
  return (
    <PodCard snapshot={snapshot} missed={missed} state={state} now={now}>
      <dl className="figures">
        <Field name="leasesHeld" label="leases held">
          {snapshot.leasesHeld}
        </Field>
        <Field name="chainStreams" label="chain streams">
          {snapshot.chains.length}
        </Field>
        <Field name="venues" label="venues">
          {snapshot.venues.length}
        </Field>
      </dl>
      <h3>Chain streams</h3>
      <ChainStreamTable chains={snapshot.chains} />
      <h3>Venues</h3>
      <VenueTable venues={snapshot.venues} />
    </PodCard>
  );
}
