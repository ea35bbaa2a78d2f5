import type { AuthSnapshot } from '@streamgate/ops';
import type { PodState } from '../model/podState.js';
import { CountsList } from './CountsList.js';
import { Field, rate, yesNo } from './Field.js';
import { PodCard } from './PodCard.js';

export function AuthCard({ snapshot, missed, state, now }: { snapshot: AuthSnapshot; missed: number; state: PodState; now: number }) {
  return (
    <PodCard snapshot={snapshot} missed={missed} state={state} now={now}>
      <dl className="figures">
        <Field name="tokensIssuedTotal" label="tokens issued">
          {snapshot.tokensIssuedTotal}
        </Field>
        <Field name="tokensPerSecond" label="tokens/s">
          {rate(snapshot.tokensPerSecond)}
        </Field>
        <Field name="ready" label="ready">
          {yesNo(snapshot.ready)}
        </Field>
      </dl>
      <dl className="lists">
        <Field name="refusals" label="refusals">
          <CountsList counts={snapshot.refusals} keyAttribute="data-reason" />
        </Field>
        <Field name="signingKeyIds" label="signing keys">
          {snapshot.signingKeyIds.length === 0 ? <span className="muted">—</span> : snapshot.signingKeyIds.join(', ')}
        </Field>
      </dl>
    </PodCard>
  );
}
