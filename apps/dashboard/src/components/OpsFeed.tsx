import type { OpsSnapshot } from '@streamgate/ops';
import { STREAM_START } from '@streamgate/protocol';
import { useRelayClient, useSubscriptionRelay } from '@streamgate/react';
import type { FleetStore } from '../model/FleetStore.js';
import type { OpsTokenProcedure } from '../token/createOpsTokenProcedure.js';

/**
 * The operations stream through the relay, like any client's stream: from the start of what the
 * stream retains (some minutes, so the charts have a past at once), then live; after a
 * disconnect or a drain the hook resumes from the last entry on whichever relay it reaches.
 */
export function OpsFeed({ procedure, store, enabled }: { procedure: OpsTokenProcedure; store: FleetStore; enabled: boolean }) {
  const relay = useRelayClient();
  const { state, error, position } = useSubscriptionRelay({
    query: procedure,
    input: undefined,
    enabled,
    from: STREAM_START,
    // Typed by the auth app's router (the annotation fails to compile if the procedure's payload
    // changes), yet parsed again in the store: the type is what producers promise, not proof.
    onSubscriptionData: (data: OpsSnapshot, meta) => store.ingest(data, meta.id),
    onError: (e) => {
      if (e.code === 'malformed_entry') store.reject(e.id, e.message);
    },
  });
  return (
    <section className="feed">
      <span>
        operations stream <b data-testid="feed-state">{state}</b>
      </span>
      <span>
        via <span data-testid="feed-relay">{relay.url}</span>
      </span>
      {/* A stream id reads like a timestamp (its first part is one, in ms): say what it is. */}
      <span title="the id of the last entry read from the operations stream; the page resumes after it">
        <span className="label" data-testid="feed-position-label">
          stream position (last entry id)
        </span>{' '}
        <code data-testid="feed-position">{position ?? '—'}</code>
      </span>
      {error === undefined || error.code === 'malformed_entry' ? null : (
        <span className="problem" data-testid="feed-error">
          {error.code}: {error.message}
        </span>
      )}
    </section>
  );
}
