import { useMemo } from 'react';
import { alignSeries } from '../model/alignSeries.js';
import type { RelayPoint } from '../model/FleetStore.js';
import { seriesColor, UPlotChart } from './UPlotChart.js';

/** Deliveries/s and connections of every relay pod over the history the page holds. */
export function FleetCharts({ history }: { history: ReadonlyMap<string, readonly RelayPoint[]> }) {
  const deliveries = useMemo(() => alignSeries(history, (p) => p.deliveriesPerSecond), [history]);
  const connections = useMemo(() => alignSeries(history, (p) => p.connections), [history]);
  const series = useMemo(() => deliveries.labels.map((label, i) => ({ label, color: seriesColor(i) })), [deliveries.labels]);
  return (
    <section className="charts">
      <UPlotChart
        testId="chart-deliveries"
        title="deliveries/s per relay pod"
        series={series}
        data={deliveries.data}
        timeAxis
        yLabel="deliveries/s"
      />
      <UPlotChart
        testId="chart-connections"
        title="connections per relay pod"
        series={series}
        data={connections.data}
        timeAxis
        yLabel="connections"
      />
    </section>
  );
}
