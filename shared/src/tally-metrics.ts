/**
 * Counters and histograms for the paths that run once per event. prom-client validates and
 * hashes a series' label values on every `inc`/`observe`, even through the labelled child
 * `labels()` returns (about 0.2–0.35 µs a call; the dispatcher made five such calls per
 * delivery). A child here is plain numbers, found once by its label values; prom-client sees
 * the totals only when the registry is read (a scrape).
 *
 * - `TallyCounter` is a prom-client `Counter` whose children add to plain numbers; its
 *   `collect` hands prom-client what was added since the last read, through the counter's own
 *   public `inc`, so its exposition is prom-client's.
 * - `TallyHistogram` keeps its own bucket counts and answers the registry's `get()` with the
 *   values prom-client's `Histogram` would (cumulative `_bucket` series with `le`, `+Inf`,
 *   `_sum`, `_count`). prom-client has no call that adds many observations at once, so it
 *   cannot be flushed into a prom-client histogram the way a counter is.
 */
import { Counter, type Histogram, type Registry } from 'prom-client';

/** One value of a metric as prom-client's registry reads it from `get()`. */
export interface ExportedValue {
  labels: Record<string, string | number>;
  /** Labels the registry renders after `labels` (prom-client's histograms put a child's own here). */
  sharedLabels?: Record<string, string>;
  value: number;
  metricName: string;
}

/** A metric as prom-client's registry reads it from `get()` (its typings say an enum; it reads the string). */
export interface ExportedMetric {
  name: string;
  help: string;
  type: 'histogram';
  aggregator: 'sum';
  values: ExportedValue[];
}

export interface TallyCounterChild {
  inc(by?: number): void;
}

export interface TallyHistogramChild {
  observe(value: number): void;
}

interface CounterTally {
  values: readonly string[];
  pending: number;
}

/** A labelled counter whose children are plain numbers, read by prom-client at each scrape. */
export class TallyCounter {
  private readonly children = new Map<string, CounterTally>();
  private readonly counter: Counter<string>;

  constructor(options: { name: string; help: string; labelNames: readonly string[]; registry: Registry }) {
    const children = this.children;
    this.counter = new Counter({
      name: options.name,
      help: options.help,
      labelNames: options.labelNames,
      registers: [options.registry],
      collect() {
        for (const tally of children.values()) {
          if (tally.pending === 0) continue;
          this.labels(...tally.values).inc(tally.pending);
          tally.pending = 0;
        }
      },
    });
    if (options.labelNames.length === 0) this.counter.inc(0);
  }

  /** The child of these label values (in `labelNames` order); keep it: finding it builds a key. */
  child(...values: string[]): TallyCounterChild {
    const key = values.join('\u0000');
    let tally = this.children.get(key);
    if (!tally) {
      // Checked once, by prom-client, here rather than at the first scrape; `inc(0)` also makes
      // the series appear at zero, as prom-client's own children do once used.
      this.counter.labels(...values).inc(0);
      this.children.set(key, (tally = { values, pending: 0 }));
    }
    const own = tally;
    return {
      inc(by = 1) {
        if (!(by >= 0) || !Number.isFinite(by)) throw new TypeError(`a counter only goes up by a finite amount, not ${by}`);
        own.pending += by;
      },
    };
  }
}

interface HistogramTally {
  labels: Record<string, string>;
  /** Observations per bucket, not cumulative; the last one is past every bound (`+Inf`). */
  counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * A labelled histogram whose children are plain numbers. Registered on the registry like any
 * prom-client metric: the registry only asks a metric for its `name`, `get()` and `reset()`.
 */
export class TallyHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  private readonly labelNames: readonly string[];
  private readonly bounds: readonly number[];
  private readonly children = new Map<string, HistogramTally>();

  constructor(options: { name: string; help: string; labelNames?: readonly string[]; buckets: readonly number[]; registry: Registry }) {
    if (options.buckets.length === 0 || options.buckets.some((bound, index) => !Number.isFinite(bound) || (index > 0 && bound <= options.buckets[index - 1]!))) {
      throw new Error(`${options.name}: buckets must be finite and increasing`);
    }
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames ?? [];
    this.bounds = [...options.buckets];
    // The registry's type accepts prom-client's own classes only; it reads nothing of a metric but
    // `name`, `getForPromString()` or `get()`, `type` and `reset()`, which this class has.
    options.registry.registerMetric(this as unknown as Histogram<string>);
    if (this.labelNames.length === 0) this.child();
  }

  /** The child of these label values (in `labelNames` order); keep it: finding it builds a key. */
  child(...values: string[]): TallyHistogramChild {
    if (values.length !== this.labelNames.length) throw new Error(`${this.name}: expected ${this.labelNames.length} label values, got ${values.length}`);
    const key = values.join('\u0000');
    let tally = this.children.get(key);
    if (!tally) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, index) => (labels[name] = values[index]!));
      this.children.set(key, (tally = { labels, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 }));
    }
    const own = tally;
    const bounds = this.bounds;
    const name = this.name;
    return {
      observe(value: number) {
        if (!Number.isFinite(value)) throw new TypeError(`${name}: not a finite value: ${value}`);
        let bucket = 0;
        while (bucket < bounds.length && value > bounds[bucket]!) bucket++;
        own.counts[bucket]!++;
        own.sum += value;
        own.count++;
      },
    };
  }

  /**
   * What prom-client's `Histogram.getForPromString()` answers for the same observations, which
   * the registry uses for the text exposition: `le` in `labels`, the child's own labels in
   * `sharedLabels` (one object per child: the registry caches their rendering by identity).
   */
  getForPromString(): Promise<ExportedMetric> {
    const values: ExportedValue[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const tally of this.children.values()) {
      const sharedLabels = tally.labels;
      let cumulative = 0;
      this.bounds.forEach((bound, index) => {
        cumulative += tally.counts[index]!;
        values.push({ labels: { le: bound }, sharedLabels, value: cumulative, metricName: bucketName });
      });
      values.push({ labels: { le: '+Inf' }, sharedLabels, value: tally.count, metricName: bucketName });
      values.push({ labels: {}, sharedLabels, value: tally.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels, value: tally.count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator });
  }

  /** What prom-client's `Histogram.get()` answers: the same values, each with all its labels. */
  async get(): Promise<ExportedMetric> {
    const metric = await this.getForPromString();
    return { ...metric, values: metric.values.map(({ labels, sharedLabels, value, metricName }) => ({ labels: { ...labels, ...sharedLabels }, value, metricName })) };
  }

  /** Back to zero; children already handed out keep counting (prom-client's own reset forgets its series). */
  reset(): void {
    for (const tally of this.children.values()) {
      tally.counts.fill(0);
      tally.sum = 0;
      tally.count = 0;
    }
  }
}
