import { useMemo } from 'react';
import { drainChartData, scheduleLeft } from '../model/DrainTrace.js';
import type { DrainTrace } from '../model/DrainTrace.js';
import { Field } from './Field.js';
import { UPlotChart } from './UPlotChart.js';

const SERIES = [
  { label: 'schedule', color: '#868e96', dash: [6, 4] },
  { label: 'connections', color: '#d9480f' },
];

/**
 * A relay's drain against the schedule it promises: connectionsAtStart × (1 − t / windowMs).
 * Both figures are taken at the latest snapshot, so they compare one instant.
 */
export function DrainPanel({ trace, active }: { trace: DrainTrace; active: boolean }) {
  const latest = trace.points.at(-1);
  const chart = useMemo(() => drainChartData(trace), [trace]);
  const left = latest?.connections ?? trace.connectionsAtStart;
  const scheduled = Math.round(scheduleLeft(trace, latest?.at ?? trace.startedAt));
  const elapsedS = Math.max(((latest?.at ?? trace.startedAt) - trace.startedAt) / 1000, 0);
  return (
    <section className="drain" data-testid="drain" data-active={active}>
      <h3>{active ? 'Draining' : 'Last drain'}</h3>
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
