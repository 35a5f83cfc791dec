/**
 * Phase (a)'s ramp decision: after each step, was the rate sustained, and what next —
 * another step up, or hold the highest sustained rate. A step counts as sustained when,
 * over its measured window (the step without its first seconds of transient):
 *
 * - the generator sent on schedule and ingest accepted what was sent (a refused or late
 *   request means the front door is the limit);
 * - the receiver got messages at the offered rate (within `tolerance`);
 * - the backlog — accepted minus delivered — and the Kafka consumer lag of every consumer
 *   the run started did not grow by more than `tolerance` of what was offered in the window:
 *   a pipeline that keeps up holds a constant backlog (rate × latency), one that does not
 *   grows it without bound. The lag is judged by its floor (`lagFloorGrowth`), not by two
 *   readings: committed offsets move in steps — a transaction per fetch, the dispatcher's
 *   every 250 ms, the indexer's per write of up to a second — so one reading of a consumer
 *   that keeps up lands anywhere between its floor and a commit's worth of records above it.
 *   The floor of a sum of three such sawtooths, read every 500 ms for 6 s, still moves by
 *   about half a second of traffic (steps at 2,000–3,100/s failed on +790 to +1,560 records in
 *   runs of a pipeline that held 4,900/s in another; a rate a consumer could not carry grew it
 *   by 8,600–40,000), so the lag may also grow by `lagSlackSeconds` of the offered rate; the
 *   60 s hold is judged on its own lag readings, without that slack;
 * - the end-to-end latency p99 of what was delivered in the window stayed within
 *   `maxP99Ms` (500 ms): keeping up behind a standing queue of seconds is not a usable
 *   operating point, so it is not counted as sustained.
 *
 * The ramp climbs until a step is not sustained, the delivered rate stops rising, or
 * `maxSteps` / `maxRate`. Then it bisects: halfway between the highest sustained step and the
 * lowest failed one, at most `maxRefinements` times while they are more than `refineAbove`
 * apart. When not even the start rate holds it halves the rate until a step does, then bisects
 * the same way: on a machine slower than the start rate, what an overloaded step still delivered
 * is no measure of the maximum (ingest and the broker take the cores first, so the delivered
 * rate collapses below what a rate the pipeline can carry delivers).
 */

export interface StepWindow {
  targetRate: number;
  seconds: number;
  /** Events sent by the generator in the window, and how many of them it sent late. */
  sent: number;
  sentLate: number;
  /** Events answered 200 in the window, and answered otherwise (errors included). */
  accepted: number;
  refused: number;
  /** Events that reached the receiver in the window (first arrivals only). */
  delivered: number;
  /** accepted − delivered at the window's start and end. */
  backlogStart: number;
  backlogEnd: number;
  /** The consumers' summed lag (records), read through the window: its first and last reading at its start and end. */
  kafkaLagSamples: readonly LagSample[];
  /** End-to-end latency p99 of the events delivered in the window (undefined: none delivered). */
  latencyP99Ms?: number | undefined;
}

export interface StepVerdict {
  targetRate: number;
  acceptedRate: number;
  deliveredRate: number;
  backlogGrowth: number;
  kafkaLagGrowth: number;
  sustained: boolean;
  /** Why not, in words; empty when sustained. */
  reasons: string[];
}

export interface RampPolicy {
  startRate: number;
  factor: number;
  maxSteps: number;
  maxRate: number;
  /** Fraction of the offered events by which rates may fall short and backlogs grow. */
  tolerance: number;
  /** A step whose delivered rate is not this fraction above the previous one's ends the ramp. */
  minGain: number;
  /** Bisect while the lowest failed rate is more than this fraction above the best sustained one… */
  refineAbove: number;
  /** …at most this many times. */
  maxRefinements: number;
  /** Highest end-to-end latency p99 of a sustained step. */
  maxP99Ms: number;
  /** Kafka lag growth a step may show beyond `tolerance`, in seconds of the offered rate: the uncertainty of its readings. */
  lagSlackSeconds: number;
}

export const DEFAULT_RAMP: RampPolicy = {
  startRate: 2000,
  factor: 1.25,
  maxSteps: 10,
  maxRate: 40_000,
  tolerance: 0.05,
  minGain: 0.03,
  refineAbove: 0.1,
  maxRefinements: 2,
  maxP99Ms: 500,
  lagSlackSeconds: 0.5,
};

export interface LagSample {
  at: number;
  lag: number;
}

/**
 * How much the lag grew over the samples' span, judged by its floor: the lowest reading of the
 * first half and of the second half of the samples, the difference scaled from the halves'
 * starts to the whole span. A consumer that keeps up returns to its floor after each commit,
 * however far above it the readings between commits go; one that falls behind raises the
 * floor. With fewer than four samples: last minus first. Pure.
 */
export function lagFloorGrowth(samples: readonly LagSample[]): number {
  const first = samples[0];
  const last = samples[samples.length - 1];
  if (!first || !last) return 0;
  if (samples.length < 4) return last.lag - first.lag;
  const half = Math.floor(samples.length / 2);
  const floorOf = (part: readonly LagSample[]) => Math.min(...part.map((sample) => sample.lag));
  const early = samples.slice(0, half);
  const late = samples.slice(half);
  const between = late[0]!.at - first.at;
  if (between <= 0) return last.lag - first.lag;
  return Math.round(((floorOf(late) - floorOf(early)) * (last.at - first.at)) / between);
}

export function judgeStep(window: StepWindow, tolerance: number, maxP99Ms = Number.POSITIVE_INFINITY, lagSlackSeconds = 0): StepVerdict {
  const offered = window.targetRate * window.seconds;
  const acceptedRate = window.accepted / window.seconds;
  const deliveredRate = window.delivered / window.seconds;
  const backlogGrowth = window.backlogEnd - window.backlogStart;
  const kafkaLagGrowth = lagFloorGrowth(window.kafkaLagSamples);
  const reasons: string[] = [];
  const floor = (1 - tolerance) * offered;
  if (window.sentLate > tolerance * offered) reasons.push(`generator behind schedule (${window.sentLate} events sent late)`);
  if (window.refused > 0) reasons.push(`ingest refused ${window.refused} events`);
  if (window.accepted < floor) reasons.push(`accepted ${fmt(acceptedRate)}/s of ${fmt(window.targetRate)}/s`);
  if (window.delivered < floor) reasons.push(`delivered ${fmt(deliveredRate)}/s of ${fmt(window.targetRate)}/s`);
  if (backlogGrowth > tolerance * offered) reasons.push(`backlog grew by ${backlogGrowth} events`);
  if (kafkaLagGrowth > tolerance * offered + lagSlackSeconds * window.targetRate) reasons.push(`Kafka consumer lag grew by ${kafkaLagGrowth} records`);
  if (window.latencyP99Ms !== undefined && window.latencyP99Ms > maxP99Ms) reasons.push(`latency p99 ${Math.round(window.latencyP99Ms)} ms over the ${maxP99Ms} ms bound`);
  return { targetRate: window.targetRate, acceptedRate, deliveredRate, backlogGrowth, kafkaLagGrowth, sustained: reasons.length === 0, reasons };
}

export type RampAction = { kind: 'step'; rate: number } | { kind: 'hold'; rate: number; why: string };

/** What to do after the steps judged so far (oldest first). */
export function nextRampAction(steps: StepVerdict[], policy: RampPolicy): RampAction {
  const last = steps[steps.length - 1];
  if (!last) return { kind: 'step', rate: policy.startRate };
  const failed = steps.filter((step) => !step.sustained);
  const sustained = steps.filter((step) => step.sustained);
  const stepsLeft = steps.length < policy.maxSteps;
  if (failed.length === 0) return climb(steps, sustained, policy);

  const lowestFailed = failed.reduce((low, step) => (step.targetRate < low.targetRate ? step : low));
  const best = sustained.reduce<StepVerdict | undefined>((high, step) => (high && high.targetRate >= step.targetRate ? high : step), undefined);
  const notHeld = `${fmt(lowestFailed.targetRate)}/s was not sustained: ${lowestFailed.reasons.join('; ')}`;
  if (!best) {
    const lower = roundRate(lowestFailed.targetRate / 2);
    if (stepsLeft && lower < lowestFailed.targetRate) return { kind: 'step', rate: lower };
    // Nothing held, down to the smallest rate: hold what the pipeline did deliver, rounded down.
    const rate = Math.max(100, Math.floor((last.deliveredRate * 0.9) / 100) * 100);
    return { kind: 'hold', rate, why: `no step was sustained; ${notHeld}` };
  }
  const midpoint = roundRate((best.targetRate + lowestFailed.targetRate) / 2);
  const worthBisecting = lowestFailed.targetRate > best.targetRate * (1 + policy.refineAbove) && midpoint > best.targetRate && midpoint < lowestFailed.targetRate;
  if (worthBisecting && stepsLeft && refinementsSoFar(steps) < policy.maxRefinements) return { kind: 'step', rate: midpoint };
  return { kind: 'hold', rate: best.targetRate, why: notHeld };
}

/** Before any failure: up by the factor while the delivered rate rises and the limits allow. */
function climb(steps: StepVerdict[], sustained: StepVerdict[], policy: RampPolicy): RampAction {
  const last = steps[steps.length - 1]!;
  const previous = sustained[sustained.length - 2];
  if (previous && last.deliveredRate < previous.deliveredRate * (1 + policy.minGain)) {
    return { kind: 'hold', rate: previous.targetRate, why: `the delivered rate stopped rising at ${fmt(last.deliveredRate)}/s` };
  }
  const next = roundRate(last.targetRate * policy.factor);
  if (steps.length >= policy.maxSteps || next > policy.maxRate) {
    return { kind: 'hold', rate: last.targetRate, why: `the ramp's limit was reached (${steps.length} steps, at most ${fmt(policy.maxRate)}/s)` };
  }
  return { kind: 'step', rate: next };
}

/** Steps taken since the ramp first had both a sustained and a failed step: the bisection's. */
function refinementsSoFar(steps: StepVerdict[]): number {
  let seenSustained = false;
  let seenFailed = false;
  for (let index = 0; index < steps.length; index++) {
    if (steps[index]!.sustained) seenSustained = true;
    else seenFailed = true;
    if (seenSustained && seenFailed) return steps.length - 1 - index;
  }
  return 0;
}

/** Rates in whole batches of 100 events. */
export function roundRate(rate: number): number {
  return Math.max(100, Math.round(rate / 100) * 100);
}

function fmt(rate: number): string {
  return Math.round(rate).toLocaleString('en-US');
}
