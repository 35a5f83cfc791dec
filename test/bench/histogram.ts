/**
 * A latency histogram that the receiver and the load generator fill in their own processes
 * and send to the orchestrator once a second, where windows are merged into phase totals.
 * Keeping every sample would mean shipping millions of numbers between processes; buckets
 * keep the counts in a few kilobytes at a known precision.
 *
 * Buckets are log-linear over whole microseconds, as in HdrHistogram: exact below 128 µs,
 * then 64 buckets per power of two, so a bucket's width is at most 1/64 of its lower bound
 * and a percentile (the bucket's midpoint) is within 0.8 % of the true sample. The maximum
 * and minimum are kept exactly.
 */

const LINEAR = 128;
const PER_OCTAVE = 64;
/** Largest recordable value: about 71 minutes; larger samples are counted at this value. */
const MAX_MICROS = 0xffff_ffff;

export function bucketOf(micros: number): number {
  const v = Math.min(MAX_MICROS, Math.max(0, Math.floor(micros)));
  if (v < LINEAR) return v;
  const bits = 32 - Math.clz32(v);
  const shift = bits - 7;
  return LINEAR + (shift - 1) * PER_OCTAVE + ((v >>> shift) - PER_OCTAVE);
}

/** The smallest and largest value (µs) that land in `bucket`. */
export function bucketBounds(bucket: number): [number, number] {
  if (bucket < LINEAR) return [bucket, bucket];
  const shift = Math.floor((bucket - LINEAR) / PER_OCTAVE) + 1;
  const mantissa = ((bucket - LINEAR) % PER_OCTAVE) + PER_OCTAVE;
  const low = mantissa * 2 ** shift;
  return [low, low + 2 ** shift - 1];
}

export interface HistogramJson {
  /** [bucket, count] pairs, buckets ascending. */
  buckets: Array<[number, number]>;
  count: number;
  sumMs: number;
  minMs: number;
  maxMs: number;
}

export interface LatencySummary {
  count: number;
  meanMs: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

export class LatencyHistogram {
  private readonly counts = new Map<number, number>();
  count = 0;
  private sumMs = 0;
  private minMs = Number.POSITIVE_INFINITY;
  private maxMs = Number.NEGATIVE_INFINITY;

  /** Records one sample in milliseconds (fractions kept to the microsecond). */
  record(ms: number): void {
    const value = Number.isFinite(ms) && ms > 0 ? ms : 0;
    const bucket = bucketOf(value * 1000);
    this.counts.set(bucket, (this.counts.get(bucket) ?? 0) + 1);
    this.count++;
    this.sumMs += value;
    if (value < this.minMs) this.minMs = value;
    if (value > this.maxMs) this.maxMs = value;
  }

  merge(other: LatencyHistogram | HistogramJson): this {
    const json = other instanceof LatencyHistogram ? other.toJSON() : other;
    for (const [bucket, count] of json.buckets) this.counts.set(bucket, (this.counts.get(bucket) ?? 0) + count);
    this.count += json.count;
    this.sumMs += json.sumMs;
    if (json.count > 0) {
      this.minMs = Math.min(this.minMs, json.minMs);
      this.maxMs = Math.max(this.maxMs, json.maxMs);
    }
    return this;
  }

  /**
   * The value below which `p` percent of the samples lie (nearest rank), as the midpoint of
   * its bucket, kept inside the exact minimum and maximum. NaN when empty.
   */
  percentile(p: number): number {
    if (this.count === 0) return Number.NaN;
    if (p >= 100) return this.maxMs;
    const rank = Math.max(1, Math.ceil((p / 100) * this.count));
    let seen = 0;
    for (const bucket of [...this.counts.keys()].sort((a, b) => a - b)) {
      seen += this.counts.get(bucket)!;
      if (seen >= rank) {
        const [low, high] = bucketBounds(bucket);
        const midMs = (low + high) / 2 / 1000;
        return Math.min(this.maxMs, Math.max(this.minMs, midMs));
      }
    }
    return this.maxMs;
  }

  summary(): LatencySummary {
    return {
      count: this.count,
      meanMs: this.count === 0 ? Number.NaN : this.sumMs / this.count,
      p50Ms: this.percentile(50),
      p95Ms: this.percentile(95),
      p99Ms: this.percentile(99),
      maxMs: this.count === 0 ? Number.NaN : this.maxMs,
    };
  }

  toJSON(): HistogramJson {
    return {
      buckets: [...this.counts.entries()].sort((a, b) => a[0] - b[0]),
      count: this.count,
      sumMs: this.sumMs,
      minMs: this.count === 0 ? 0 : this.minMs,
      maxMs: this.count === 0 ? 0 : this.maxMs,
    };
  }

  static fromJSON(json: HistogramJson): LatencyHistogram {
    return new LatencyHistogram().merge(json);
  }
}
