/** A line chart sized to its container; uPlot is loaded the first time one is shown. */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ChartSpec } from './uplot-chart';

export type { LineSpec } from './uplot-chart';

export function LineChart(spec: ChartSpec) {
  const container = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const { title, times, lines, unit } = spec;

  useEffect(() => {
    const element = container.current;
    if (!element) return undefined;
    let remove: (() => void) | undefined;
    let current = true;
    import('./uplot-chart').then(
      ({ drawChart }) => {
        if (current) remove = drawChart(element, { title, times, lines, unit });
      },
      (error: unknown) => current && setFailed(error instanceof Error ? error.message : String(error)),
    );
    return () => {
      current = false;
      remove?.();
    };
  }, [title, times, lines, unit]);

  if (failed) return <p class="state error">Could not load the chart library: {failed}</p>;
  return <div class="chart" ref={container} role="img" aria-label={title} />;
}
