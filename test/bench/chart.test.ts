import { describe, expect, it } from 'vitest';
import { escapeXml, niceStep, renderChart, type ChartPoint } from './chart.js';

const points: ChartPoint[] = Array.from({ length: 30 }, (_, i) => ({
  t: i + 1,
  offered: 3000,
  accepted: 2900 + (i % 3) * 50,
  delivered: i === 10 ? undefined : 2950,
  p50Ms: 40 + i,
  p99Ms: 300 + i * 10,
}));

function polylines(svg: string): string[] {
  return [...svg.matchAll(/<polyline [^>]*points="([^"]+)"/g)].map((m) => m[1]!);
}

describe('renderChart', () => {
  it('draws one line per series, breaking a line where its data is missing', () => {
    const svg = renderChart({ title: 'run', points, phases: [{ label: '(a) 3,000/s', fromS: 0, toS: 30 }] });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    // offered, accepted, p50, p99 whole; delivered in two pieces around t = 11.
    expect(polylines(svg)).toHaveLength(6);
    for (const label of ['offered', 'accepted by ingest', 'delivered to the receiver', 'latency p50', 'latency p99', '(a) 3,000/s']) {
      expect(svg).toContain(`>${label}</text>`);
    }
  });

  it('puts every point inside its panel: rates on a linear axis, latency on a log axis', () => {
    const svg = renderChart({ title: 'run', points, phases: [] });
    const [offered, , , , p50] = polylines(svg).map((line) => line.split(' ').map((pair) => pair.split(',').map(Number) as [number, number]));
    // The rate panel spans y 50–280, the latency panel 340–540, x 70–940.
    for (const [x, y] of offered!) {
      expect(x).toBeGreaterThanOrEqual(70);
      expect(x).toBeLessThanOrEqual(940);
      expect(y).toBeGreaterThanOrEqual(50);
      expect(y).toBeLessThanOrEqual(280);
    }
    // A flat series draws flat; latency rising 40 → 69 ms goes up the log axis.
    expect(new Set(offered!.map(([, y]) => y)).size).toBe(1);
    const ys = p50!.map(([, y]) => y);
    expect(ys[0]).toBeGreaterThan(ys[ys.length - 1]!);
    for (const y of ys) {
      expect(y).toBeGreaterThanOrEqual(340);
      expect(y).toBeLessThanOrEqual(540);
    }
    // Log decades are labelled from 1 ms up to 1k (the largest p99 is 590 ms).
    expect(svg).toContain('>1</text>');
    expect(svg).toContain('>1k</text>');
  });

  it('escapes text and survives an empty run', () => {
    const svg = renderChart({ title: 'a <b> & "c"', points: [], phases: [] });
    expect(svg).toContain('a &lt;b&gt; &amp; &quot;c&quot;');
    expect(polylines(svg)).toHaveLength(0);
    expect(svg).not.toContain('NaN');
    expect(escapeXml(`'`)).toBe('&apos;');
  });

  it('leaves out phase labels too wide for their band', () => {
    const svg = renderChart({ title: 't', points, phases: [{ label: 'a rather long phase name', fromS: 10, toS: 11 }] });
    expect(svg).not.toContain('a rather long phase name');
  });
});

describe('niceStep', () => {
  it('picks 1, 2 or 5 times a power of ten', () => {
    expect(niceStep(4000)).toBe(1000);
    expect(niceStep(9000)).toBe(2000);
    expect(niceStep(23)).toBe(5);
    expect(niceStep(0)).toBe(1);
  });
});
