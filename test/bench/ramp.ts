/**
 * Phase (a)'s ramp decision: after each step, was the rate sustained, and what next —
 * another step up, or hold the highest sustained rate. A step counts as sustained when,
 * over its measured window (the step without its first seconds of transient):
 *
 * - the generator sent on schedule and ingest accepted what was sent (a refused or late
 *   request means the front door is the limit);
 * - the receiver got messages at the offered rate (within `tolerance`);
 * - the backlog — accepted minus delivered — and the Kafka consumer lag of the router and
 *   the dispatcher did not grow by more than `tolerance` of what was offered in the window:
 *   a pipeline that keeps up holds a constant backlog (rate × latency), one that does not
 *   grows it without bound;
 * - the end-to-end latency p99 of what was delivered in the window stayed within
 *   `maxP99Ms` (500 ms): keeping up behind a standing queue of seconds is not a usable
 *   operating point, so it is not counted as sustained.
 *
 * The ramp stops at the first step that is not sustained, or once the delivered rate stops
 * rising, or at `maxSteps` / `maxRate`. After the first step that is not sustained it tries
 * once more halfway between it and the highest sustained step (when they are more than
 * `refineAbove` apart), so the figure held is within about half a step of the limit.
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
  /** Router + dispatcher consumer lag (records) at the window's start and end. */
  kafkaLagStart: number;
  kafkaLagEnd: number;
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
  /** Try the midpoint once when the first failed rate is more than this fraction above the best. */
  refineAbove: number;
  /** Highest end-to-end latency p99 of a sustained step. */
  maxP99Ms: number;
}

export const DEFAULT_RAMP: RampPolicy = {
  startRate: 2000,
  factor: 1.25,
  maxSteps: 10,
  maxRate: 40_000,
  tolerance: 0.05,
  minGain: 0.03,
  refineAbove: 0.1,
  maxP99Ms: 500,
};

export function judgeStep(window: StepWindow, tolerance: number, maxP99Ms = Number.POSITIVE_INFINITY): StepVerdict {
  const offered = window.targetRate * window.seconds;
  const acceptedRate = window.accepted / window.seconds;
  const deliveredRate = window.delivered / window.seconds;
  const backlogGrowth = window.backlogEnd - window.backlogStart;
  const kafkaLagGrowth = window.kafkaLagEnd - window.kafkaLagStart;
  const reasons: string[] = [];
  const floor = (1 - tolerance) * offered;
  if (window.sentLate > tolerance * offered) reasons.push(`generator behind schedule (${window.sentLate} events sent late)`);
  if (window.refused > 0) reasons.push(`ingest refused ${window.refused} events`);
  if (window.accepted < floor) reasons.push(`accepted ${fmt(acceptedRate)}/s of ${fmt(window.targetRate)}/s`);
  if (window.delivered < floor) reasons.push(`delivered ${fmt(deliveredRate)}/s of ${fmt(window.targetRate)}/s`);
  if (backlogGrowth > tolerance * offered) reasons.push(`backlog grew by ${backlogGrowth} events`);
  if (kafkaLagGrowth > tolerance * offered) reasons.push(`Kafka consumer lag grew by ${kafkaLagGrowth} records`);
  if (window.latencyP99Ms !== undefined && window.latencyP99Ms > maxP99Ms) reasons.push(`latency p99 ${Math.round(window.latencyP99Ms)} ms over the ${maxP99Ms} ms bound`);
  return { targetRate: window.targetRate, acceptedRate, deliveredRate, backlogGrowth, kafkaLagGrowth, sustained: reasons.length === 0, reasons };
}

export type RampAction = { kind: 'step'; rate: number } | { kind: 'hold'; rate: number; why: string };

/** What to do after the steps judged so far (oldest first). */
export function nextRampAction(steps: StepVerdict[], policy: RampPolicy): RampAction {
  const last = steps[steps.length - 1];
  if (!last) return { kind: 'step', rate: policy.startRate };
  const sustained = steps.filter((step) => step.sustained);
  const best = sustained[sustained.length - 1];
  const firstFailure = steps.findIndex((step) => !step.sustained);
  if (best && firstFailure >= 0 && firstFailure === steps.length - 1) {
    const failedRate = steps[firstFailure]!.targetRate;
    const midpoint = roundRate((best.targetRate + failedRate) / 2);
    if (failedRate > best.targetRate * (1 + policy.refineAbove) && midpoint > best.targetRate && midpoint < failedRate) {
      return { kind: 'step', rate: midpoint };
    }
  }
  if (firstFailure >= 0) {
    const failed = steps.filter((step) => !step.sustained);
    const lowestFailed = failed.reduce((low, step) => (step.targetRate < low.targetRate ? step : low), failed[0]!);
    if (best) return { kind: 'hold', rate: best.targetRate, why: `${fmt(lowestFailed.targetRate)}/s was not sustained: ${lowestFailed.reasons.join('; ')}` };
    // Not even the first step held: hold what the pipeline did deliver, rounded down.
    const rate = Math.max(100, Math.floor((last.deliveredRate * 0.9) / 100) * 100);
    return { kind: 'hold', rate, why: `the first step (${fmt(last.targetRate)}/s) was not sustained: ${last.reasons.join('; ')}` };
  }
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

/** Rates in whole batches of 100 events. */
export function roundRate(rate: number): number {
  return Math.max(100, Math.round(rate / 100) * 100);
}

function fmt(rate: number): string {
  return Math.round(rate).toLocaleString('en-US');
}
