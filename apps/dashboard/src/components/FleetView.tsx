import { memo, useSyncExternalStore } from 'react';
import type { FleetStore } from '../model/FleetStore.js';
import { podState } from '../model/podState.js';
import { AuthCard } from './AuthCard.js';
import { FleetCharts } from './FleetCharts.js';
import { IngestCard } from './IngestCard.js';
import { RelayCard } from './RelayCard.js';
import { useNow } from './useNow.js';

/** Every pod's card and the charts, re-rendered when the store changes and twice a second for staleness. */
export const FleetView = memo(function FleetView({ store }: { store: FleetStore }) {
  const view = useSyncExternalStore(store.subscribe, store.getView);
  // On the pods' clock, so a browser whose clock is off does not see every pod stale (or none).
  const now = useNow(500) - view.skewMs;
  return (
    <>
      <section className="bad-entries" data-testid="bad-entries-panel">
        snapshots <b data-testid="snapshots-received">{view.snapshots}</b> · bad entries{' '}
        <b data-testid="bad-entries" className={view.badEntries.count > 0 ? 'problem' : undefined}>
          {view.badEntries.count}
        </b>
        {view.badEntries.last === undefined ? null : (
          <span className="muted" data-testid="bad-entry-last">
            {' '}
            latest: {view.badEntries.last}
          </span>
        )}
      </section>
      <FleetCharts history={view.relayHistory} />
      {view.pods.length === 0 ? (
        <p className="muted" data-testid="no-pods">
          No snapshot yet.
        </p>
      ) : null}
      <section className="cards">
        {view.pods.map(({ snapshot, drain, missed }) => {
          const state = podState(snapshot, now);
          switch (snapshot.kind) {
            case 'relay':
              return (
                <RelayCard
                  key={`${snapshot.kind}:${snapshot.pod}`}
                  snapshot={snapshot}
                  drain={drain}
                  missed={missed}
                  state={state}
                  now={now}
                />
              );
            case 'auth':
              return <AuthCard key={`${snapshot.kind}:${snapshot.pod}`} snapshot={snapshot} missed={missed} state={state} now={now} />;
            case 'ingest':
              return <IngestCard key={`${snapshot.kind}:${snapshot.pod}`} snapshot={snapshot} missed={missed} state={state} now={now} />;
          }
        })}
      </section>
    </>
  );
});
