/**
 * Draws one uPlot line chart into an element. Loaded on demand by chart.tsx, so uPlot and its
 * stylesheet are fetched only by the charts page. uPlot draws on a canvas and styles its
 * elements through the CSSOM only, so it works under the console's CSP (no inline styles).
 */
import uPlot, { type AlignedData, type Options } from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface LineSpec {
  label: string;
  color: string;
  values: Array<number | null>;
  dash?: number[];
}

export interface ChartSpec {
  title: string;
  times: number[];
  lines: LineSpec[];
  unit: string;
}

const HEIGHT = 260;

/** Draws the chart and follows the element's width; the returned function removes it. */
export function drawChart(element: HTMLElement, { title, times, lines, unit }: ChartSpec): () => void {
  const width = () => Math.max(element.clientWidth, 300);
  const options: Options = {
    title,
    width: width(),
    height: HEIGHT,
    // uPlot's x values are Unix seconds; the console shows times in UTC.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1_000), 'Etc/UTC'),
    scales: { x: { time: true }, y: { range: (_u, min, max) => [0, Math.max(max, min, 1)] } },
    axes: [{}, { label: unit, size: 60 }],
    series: [
      { label: 'time (UTC)' },
      ...lines.map((line) => ({
        label: line.label,
        stroke: line.color,
        width: 2,
        ...(line.dash ? { dash: line.dash } : {}),
        value: (_u: uPlot, value: number | null) => (value === null ? '—' : `${Math.round(value * 10) / 10} ${unit}`),
      })),
    ],
  };
  const data: AlignedData = [times, ...lines.map((line) => line.values)];
  const chart = new uPlot(options, data, element);
  const resize = new ResizeObserver(() => chart.setSize({ width: width(), height: HEIGHT }));
  resize.observe(element);
  return () => {
    resize.disconnect();
    chart.destroy();
  };
}
