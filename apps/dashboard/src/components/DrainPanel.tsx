import { useMemo } from 'react';
import { drainChartData, scheduleLeft } from '../model/DrainTrace.js';
import type { DrainTrace } from '../model/DrainTrace.js';
import type { PodState } from '../model/podState.js';
import { Field, yesNo } from './Field.js';
import { UPlotChart } from './UPlotChart.js';

const SERIES = [
  { label: 'schedule', color: '#868e96', dash: [6, 4] },
  { label: 'connections', color: '#d9480f' },
];

const OUTCOME_TITLE = { drained: 'Drained: every connection left', deadline: 'Drained: the deadline closed the rest' } as const;

/**
 * A relay's drain against the schedule it promises: connectionsAtStart × (1 − t / windowMs).
 * Both figures are taken at the latest snapshot, so they compare one instant. Active while the
 * pod is `draining`: not once its last snapshot said how the drain ended, nor once it went stale.
 */
export function DrainPanel({ trace, state }: { trace: DrainTrace; state: PodState }) {
  const active = state === 'draining';
  const latest = trace.points.at(-1);
  const chart = useMemo(() => drainChartData(trace), [trace]);
  const left = latest?.connections ?? trace.connectionsAtStart;
  const scheduled = Math.round(scheduleLeft(trace, latest?.at ?? trace.startedAt));
  const elapsedS = Math.max(((latest?.at ?? trace.startedAt) - trace.startedAt) / 1000, 0);
  return (
    <section className="drain" data-testid="drain" data-active={yesNo(active)}>
      <h3>{active ? 'Draining' : trace.outcome === null ? 'Last drain' : OUTCOME_TITLE[trace.outcome]}</h3>
      <dl>
        <Field name="drainConnectionsLeft" label="connections left">
          {left}
        </Field>
        <Field name="drainScheduleLeft" label="schedule says">
          {scheduled}
        </Field>
        <Field name="drainConnectionsAtStart" label="at start">
          {trace.connectionsAtStart}
        </Field>
        <Field name="drainElapsed" label="elapsed / window">
          {elapsedS.toFixed(1)} s / {(trace.windowMs / 1000).toFixed(1)} s
        </Field>
        <Field name="drainOutcome" label="outcome">
          {trace.outcome ?? '—'}
        </Field>
      </dl>
      <UPlotChart
        testId="drain-chart"
        title="connections left vs schedule"
        series={SERIES}
        data={[chart.x, chart.schedule, chart.actual]}
        timeAxis={false}
        height={150}
      />
    </section>
  );
}
