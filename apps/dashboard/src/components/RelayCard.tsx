import type { RelaySnapshot } from '@streamgate/ops';
import type { DrainTrace } from '../model/DrainTrace.js';
import type { PodState } from '../model/podState.js';
import { CountsList } from './CountsList.js';
import { DrainPanel } from './DrainPanel.js';
import { Field, rate, yesNo } from './Field.js';
import { PodCard } from './PodCard.js';

export function RelayCard({
  snapshot,
  drain,
  missed,
  state,
  now,
}: {
  snapshot: RelaySnapshot;
  drain: DrainTrace | undefined;
  missed: number;
  state: PodState;
  now: number;
}) {
  return (
    <PodCard snapshot={snapshot} missed={missed} state={state} now={now}>
      <dl className="figures">
        <Field name="connections" label="connections">
          {snapshot.connections}
        </Field>
        <Field name="subscriptions" label="subscriptions">
          {snapshot.subscriptions}
        </Field>
        <Field name="streamsWatched" label="streams watched">
          {snapshot.streamsWatched}
        </Field>
        <Field name="deliveriesPerSecond" label="deliveries/s">
          {rate(snapshot.deliveriesPerSecond)}
        </Field>
        <Field name="deliveriesTotal" label="deliveries">
          {snapshot.deliveriesTotal}
        </Field>
        <Field name="ready" label="ready">
          {yesNo(snapshot.ready)}
        </Field>
        {snapshot.revocations === undefined ? null : (
          <Field name="revocations" label="revocations held / ended">
            {snapshot.revocations.held} / {snapshot.revocations.ended}
          </Field>
        )}
      </dl>
      <dl className="lists">
        <Field name="readMode" label="read mode">
          {snapshot.readModes.length === 0 ? (
            <span className="muted">—</span>
          ) : (
            <ul className="counts">
              {snapshot.readModes.map((m) => (
                <li key={m.target} data-target={m.target} data-mode={m.mode}>
                  {m.target} <b>{m.mode}</b>
                </li>
              ))}
            </ul>
          )}
        </Field>
        <Field name="refusals" label="refusals">
          <CountsList counts={snapshot.refusals} keyAttribute="data-reason" />
        </Field>
      </dl>
      {drain === undefined ? null : <DrainPanel trace={drain} state={state} />}
    </PodCard>
  );
}
