import { useEffect, useLayoutEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  readonly label: string;
  readonly color: string;
  readonly dash?: readonly number[];
}

export interface UPlotChartProps {
  /** `data-testid` of the chart's container. */
  readonly testId: string;
  readonly title: string;
  readonly series: readonly ChartSeries[];
  /** x, then one array per series. */
  readonly data: uPlot.AlignedData;
  /** x is seconds since the epoch (a clock axis) rather than plain seconds. */
  readonly timeAxis: boolean;
  readonly yLabel?: string;
  readonly height?: number;
}

const PALETTE = ['#2f6fde', '#d9480f', '#2b8a3e', '#862e9c', '#e67700', '#0b7285', '#c2255c', '#5c940d'];

const clockTime = uPlot.fmtDate('{HH}:{mm}:{ss}');

export function seriesColor(index: number): string {
  return PALETTE[index % PALETTE.length] ?? '#2f6fde';
}

/**
 * A uPlot chart: created when its series change, fed with setData otherwise, resized with its
 * container. The container carries how many x values it draws, so tests see it has data.
 */
export function UPlotChart({ testId, title, series, data, timeAxis, yLabel, height = 180 }: UPlotChartProps) {
  const container = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const latestData = useRef(data);
  latestData.current = data;
  const seriesKey = JSON.stringify(series);

  useLayoutEffect(() => {
    const element = container.current;
    if (element === null) return undefined;
    const options: uPlot.Options = {
      title,
      width: Math.max(element.clientWidth, 200),
      height,
      // Labels only: values under the cursor would read "--" whenever it is elsewhere.
      legend: { live: false },
      scales: { x: { time: timeAxis }, y: { range: (_u, min, max) => [Math.min(0, min), Math.max(1, max * 1.1)] } },
      // One line of clock time: uPlot's default adds a date line whose labels collide on a few minutes' range.
      axes: [
        timeAxis ? { space: 90, values: (_u, splits) => splits.map((s) => clockTime(new Date(s * 1000))) } : {},
        { label: yLabel ?? '', size: 50 },
      ],
      series: [
        { label: timeAxis ? 'time' : 's since start' },
        ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, spanGaps: false, ...(s.dash ? { dash: [...s.dash] } : {}) })),
      ],
    };
    const chart = new uPlot(options, latestData.current, element);
    plot.current = chart;
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(element.clientWidth, 200), height }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
      plot.current = null;
    };
    // The series' content (seriesKey), not their array's identity, decides when the chart is rebuilt.
  }, [seriesKey, title, timeAxis, yLabel, height]);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  return (
    <div
      ref={container}
      className="chart"
      data-testid={testId}
      data-series={series.map((s) => s.label).join(',')}
      data-points={data[0].length}
    />
  );
}
