import type { ReactNode } from 'react';
import type { OpsSnapshot } from '@streamgate/ops';
import type { PodState } from '../model/podState.js';

/** The frame every pod's card shares: `[data-testid="pod-card"][data-pod][data-kind][data-state]`. */
export function PodCard({
  snapshot,
  missed,
  state,
  now,
  children,
}: {
  snapshot: OpsSnapshot;
  missed: number;
  state: PodState;
  now: number;
  children: ReactNode;
}) {
  const ageS = Math.max((now - snapshot.at) / 1000, 0);
  const upS = Math.max((snapshot.at - snapshot.startedAt) / 1000, 0);
  return (
    <article className={`card ${state}`} data-testid="pod-card" data-pod={snapshot.pod} data-kind={snapshot.kind} data-state={state}>
      <header>
        <h2>{snapshot.pod}</h2>
        <span className="kind">{snapshot.kind}</span>
        <span className="badge" data-field="state">
          {state}
        </span>
      </header>
      <p className="meta">
        last snapshot <span data-field="age">{ageS.toFixed(0)}</span> s ago · up {formatDuration(upS)} · seq{' '}
        <span data-field="seq">{snapshot.seq}</span> · missed{' '}
        <span data-field="missed" className={missed > 0 ? 'problem' : undefined}>
          {missed}
        </span>
        {snapshot.truncated ? <span className="problem"> · lists cut to fit</span> : null}
      </p>
      {children}
    </article>
  );
}

function formatDuration(seconds: number): string {
  if (seconds < 120) return `${seconds.toFixed(0)} s`;
  if (seconds < 7_200) return `${(seconds / 60).toFixed(0)} min`;
  return `${(seconds / 3_600).toFixed(1)} h`;
}
