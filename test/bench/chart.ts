/**
 * The run's chart as a self-contained SVG, drawn by hand (no charting dependency): on top,
 * events per second offered, accepted by ingest and delivered to the receiver; below,
 * end-to-end latency p50 and p99 of the messages that arrived in each second, on a log
 * scale (it spans milliseconds at ease to seconds under overload). Phases are shaded.
 */

export interface ChartPoint {
  /** Seconds since the run's start (end of the one-second window). */
  t: number;
  offered?: number;
  accepted?: number;
  delivered?: number;
  p50Ms?: number;
  p99Ms?: number;
}

export interface ChartPhase {
  label: string;
  fromS: number;
  toS: number;
}

export interface ChartInput {
  title: string;
  points: ChartPoint[];
  phases: ChartPhase[];
}

const WIDTH = 960;
const LEFT = 70;
const RIGHT = 20;
const PLOT_WIDTH = WIDTH - LEFT - RIGHT;
const TOP_PANEL = { y: 50, height: 230 };
const BOTTOM_PANEL = { y: 340, height: 200 };
const HEIGHT = 590;
const COLOURS = { offered: '#9e9e9e', accepted: '#1f77b4', delivered: '#2ca02c', p50: '#ff7f0e', p99: '#d62728' };

export function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);
}

/** 1, 2 or 5 × a power of ten, so that about `count` steps cover `max`. */
export function niceStep(max: number, count = 5): number {
  if (!(max > 0)) return 1;
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const fraction = raw / power;
  return (fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10) * power;
}

function formatNumber(value: number): string {
  if (value >= 1000) return `${Number((value / 1000).toFixed(1))}k`;
  return String(Number(value.toFixed(2)));
}

function polyline(points: Array<[number, number]>, colour: string, dashed = false): string {
  if (points.length === 0) return '';
  const coordinates = points.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ');
  return `<polyline fill="none" stroke="${colour}" stroke-width="1.6"${dashed ? ' stroke-dasharray="5,4"' : ''} points="${coordinates}"/>`;
}

/** Runs of consecutive defined values, so a gap in the data is a gap in the line. */
function segments(values: Array<[number, number | undefined]>): Array<Array<[number, number]>> {
  const runs: Array<Array<[number, number]>> = [];
  let current: Array<[number, number]> = [];
  for (const [x, y] of values) {
    if (y === undefined || !Number.isFinite(y)) {
      if (current.length > 0) runs.push(current);
      current = [];
    } else current.push([x, y]);
  }
  if (current.length > 0) runs.push(current);
  return runs;
}

export function renderChart({ title, points, phases }: ChartInput): string {
  const maxT = Math.max(1, ...points.map((p) => p.t), ...phases.map((p) => p.toS));
  const x = (t: number) => LEFT + (t / maxT) * PLOT_WIDTH;

  const maxRate = Math.max(1, ...points.flatMap((p) => [p.offered ?? 0, p.accepted ?? 0, p.delivered ?? 0]));
  const rateStep = niceStep(maxRate);
  const rateTop = Math.ceil(maxRate / rateStep) * rateStep;
  const yRate = (v: number) => TOP_PANEL.y + TOP_PANEL.height - (v / rateTop) * TOP_PANEL.height;

  const latencies = points.flatMap((p) => [p.p50Ms, p.p99Ms]).filter((v): v is number => v !== undefined && Number.isFinite(v) && v > 0);
  const minDecade = Math.floor(Math.log10(Math.min(1, ...latencies)));
  const maxDecade = Math.max(minDecade + 1, Math.ceil(Math.log10(Math.max(10, ...latencies))));
  const yLatency = (ms: number) => {
    const clamped = Math.min(10 ** maxDecade, Math.max(10 ** minDecade, ms));
    return BOTTOM_PANEL.y + BOTTOM_PANEL.height - ((Math.log10(clamped) - minDecade) / (maxDecade - minDecade)) * BOTTOM_PANEL.height;
  };

  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`);
  out.push(`<text x="${LEFT}" y="22" font-size="15" font-weight="bold">${escapeXml(title)}</text>`);

  phases.forEach((phase, index) => {
    const x0 = x(phase.fromS);
    const width = Math.max(0, x(phase.toS) - x0);
    const fill = index % 2 === 0 ? '#f2f2f7' : '#f7f2ec';
    for (const panel of [TOP_PANEL, BOTTOM_PANEL]) {
      out.push(`<rect x="${x0.toFixed(1)}" y="${panel.y}" width="${width.toFixed(1)}" height="${panel.height}" fill="${fill}"/>`);
    }
    // A label wider than its band would run into the next one: it is left out (the bands keep their shading).
    if (phase.label.length * 6.5 <= width + 20) out.push(`<text x="${(x0 + 3).toFixed(1)}" y="${TOP_PANEL.y - 6}" fill="#555">${escapeXml(phase.label)}</text>`);
  });

  // Axes and grid: rate (linear) on top, latency (log) below.
  for (let v = 0; v <= rateTop + rateStep / 2; v += rateStep) {
    const y = yRate(v);
    out.push(`<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="#ddd"/>`);
    out.push(`<text x="${LEFT - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end">${formatNumber(v)}</text>`);
  }
  out.push(`<text transform="translate(16,${TOP_PANEL.y + TOP_PANEL.height / 2}) rotate(-90)" text-anchor="middle">events / s</text>`);
  for (let decade = minDecade; decade <= maxDecade; decade++) {
    for (const factor of decade === maxDecade ? [1] : [1, 2, 5]) {
      const ms = factor * 10 ** decade;
      const y = yLatency(ms);
      out.push(`<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="${factor === 1 ? '#ccc' : '#eee'}"/>`);
      out.push(`<text x="${LEFT - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end">${formatNumber(ms)}</text>`);
    }
  }
  out.push(`<text transform="translate(16,${BOTTOM_PANEL.y + BOTTOM_PANEL.height / 2}) rotate(-90)" text-anchor="middle">latency, ms (log)</text>`);
  const timeStep = niceStep(maxT, 10);
  for (let t = 0; t <= maxT; t += timeStep) {
    const px = x(t).toFixed(1);
    out.push(`<line x1="${px}" x2="${px}" y1="${BOTTOM_PANEL.y + BOTTOM_PANEL.height}" y2="${BOTTOM_PANEL.y + BOTTOM_PANEL.height + 4}" stroke="#333"/>`);
    out.push(`<text x="${px}" y="${BOTTOM_PANEL.y + BOTTOM_PANEL.height + 17}" text-anchor="middle">${formatNumber(t)}</text>`);
  }
  out.push(`<text x="${LEFT + PLOT_WIDTH / 2}" y="${HEIGHT - 12}" text-anchor="middle">seconds since start</text>`);
  for (const panel of [TOP_PANEL, BOTTOM_PANEL]) {
    out.push(`<rect x="${LEFT}" y="${panel.y}" width="${PLOT_WIDTH}" height="${panel.height}" fill="none" stroke="#333"/>`);
  }

  const series: Array<{ key: keyof typeof COLOURS; label: string; value: (p: ChartPoint) => number | undefined; y: (v: number) => number; dashed?: boolean }> = [
    { key: 'offered', label: 'offered', value: (p) => p.offered, y: yRate, dashed: true },
    { key: 'accepted', label: 'accepted by ingest', value: (p) => p.accepted, y: yRate },
    { key: 'delivered', label: 'delivered to the receiver', value: (p) => p.delivered, y: yRate },
    { key: 'p50', label: 'latency p50', value: (p) => p.p50Ms, y: yLatency },
    { key: 'p99', label: 'latency p99', value: (p) => p.p99Ms, y: yLatency },
  ];
  for (const s of series) {
    for (const run of segments(points.map((p) => [p.t, s.value(p)]))) {
      out.push(polyline(run.map(([t, v]) => [x(t), s.y(v)]), COLOURS[s.key], s.dashed));
    }
  }
  // One legend row between the panels, clear of the data.
  const legendY = TOP_PANEL.y + TOP_PANEL.height + 24;
  let px = LEFT;
  for (const s of series) {
    out.push(`<line x1="${px}" x2="${px + 22}" y1="${legendY - 4}" y2="${legendY - 4}" stroke="${COLOURS[s.key]}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5,4"' : ''}/>`);
    out.push(`<text x="${px + 27}" y="${legendY}">${escapeXml(s.label)}</text>`);
    px += 27 + s.label.length * 6.5 + 24;
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
