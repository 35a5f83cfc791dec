import { describe, expect, it } from 'vitest';
import { DEFAULT_RAMP, judgeStep, lagFloorGrowth, nextRampAction, roundRate, type LagSample, type StepVerdict, type StepWindow } from './ramp.js';

/** A window in which the pipeline kept up exactly with `rate` for 6 s. */
function keptUp(rate: number, overrides: Partial<StepWindow> = {}): StepWindow {
  const events = rate * 6;
  return {
    targetRate: rate,
    seconds: 6,
    sent: events,
    sentLate: 0,
    accepted: events,
    refused: 0,
    delivered: events,
    backlogStart: 300,
    backlogEnd: 300,
    kafkaLagSamples: [
      { at: 0, lag: 100 },
      { at: 6_000, lag: 100 },
    ],
    ...overrides,
  };
}

const sustained = (rate: number): StepVerdict => judgeStep(keptUp(rate), 0.05);
/** A step that delivered five sixths of what was offered while its backlog grew. */
const failed = (rate: number): StepVerdict => judgeStep(keptUp(rate, { delivered: rate * 5, backlogEnd: 300 + rate }), 0.05);

describe('judgeStep', () => {
  it('does not count a step kept up behind a standing queue: p99 over the bound', () => {
    expect(judgeStep(keptUp(5000, { latencyP99Ms: 480 }), 0.05, 500).sustained).toBe(true);
    const verdict = judgeStep(keptUp(5000, { latencyP99Ms: 2400 }), 0.05, 500);
    expect(verdict.sustained).toBe(false);
    expect(verdict.reasons).toEqual(['latency p99 2400 ms over the 500 ms bound']);
  });

  it('sustains a step in which everything offered was accepted and delivered with a steady backlog', () => {
    const verdict = judgeStep(keptUp(2000), 0.05);
    expect(verdict).toMatchObject({ sustained: true, reasons: [], acceptedRate: 2000, deliveredRate: 2000, backlogGrowth: 0 });
  });

  it('tolerates small shortfalls and backlog wobble', () => {
    expect(judgeStep(keptUp(2000, { delivered: 11_500, backlogEnd: 800 }), 0.05).sustained).toBe(true);
  });

  it('fails a step whose backlog grows without the delivered rate showing it yet', () => {
    const verdict = judgeStep(keptUp(4000, { backlogEnd: 300 + 2000 }), 0.05);
    expect(verdict.sustained).toBe(false);
    expect(verdict.reasons).toEqual(['backlog grew by 2000 events']);
  });

  it('fails a step on Kafka consumer lag growth', () => {
    const verdict = judgeStep(keptUp(4000, { kafkaLagSamples: [{ at: 0, lag: 100 }, { at: 6_000, lag: 100 + 5000 }] }), 0.05);
    expect(verdict.reasons).toEqual(['Kafka consumer lag grew by 5000 records']);
  });

  it('does not take the readings between commits for growth: a consumer that keeps up returns to its floor', () => {
    // 1,000/s, read every 500 ms: offsets committed about once a second, readings anywhere up
    // to a commit's worth above the floor. Two readings alone (100, then 820) said +720.
    const lags = [100, 524, 857, 427, 106, 418, 624, 820, 106, 518, 130, 760, 820];
    const samples = lags.map((lag, index) => ({ at: index * 500, lag }));
    expect(lagFloorGrowth(samples)).toBeLessThan(100);
    expect(judgeStep(keptUp(1000, { kafkaLagSamples: samples }), 0.05).sustained).toBe(true);
  });

  it('sees a floor that rises under the same noise', () => {
    // Falling behind by 300 records a second: 1,800 over the 6 s, under readings that wander by 700.
    const noise = [0, 424, 757, 327, 6, 318, 524, 720, 6, 418, 30, 660, 720];
    const samples: LagSample[] = noise.map((extra, index) => ({ at: index * 500, lag: 100 + 150 * index + extra }));
    const growth = lagFloorGrowth(samples);
    expect(growth).toBeGreaterThan(1_500);
    expect(growth).toBeLessThan(3_000);
    expect(judgeStep(keptUp(1000, { kafkaLagSamples: samples }), 0.05).reasons).toEqual([`Kafka consumer lag grew by ${growth} records`]);
  });

  it('lets the lag grow by lagSlackSeconds of the offered rate beyond the tolerance, and no more', () => {
    // 3,100/s over 6 s: the tolerance is 930 records, half a second of the rate 1,550 more.
    const grew = (records: number) => keptUp(3100, { kafkaLagSamples: [{ at: 0, lag: 100 }, { at: 6_000, lag: 100 + records }] });
    expect(judgeStep(grew(1_560), 0.05).sustained).toBe(false);
    expect(judgeStep(grew(1_560), 0.05, 500, DEFAULT_RAMP.lagSlackSeconds).sustained).toBe(true);
    expect(judgeStep(grew(2_480), 0.05, 500, 0.5).sustained).toBe(true);
    expect(judgeStep(grew(2_481), 0.05, 500, 0.5).reasons).toEqual(['Kafka consumer lag grew by 2481 records']);
    // A rate a consumer cannot carry still fails by far: 5,200/s, +8,632 over the step.
    expect(judgeStep(keptUp(5200, { kafkaLagSamples: [{ at: 0, lag: 0 }, { at: 6_000, lag: 8_632 }] }), 0.05, 500, 0.5).sustained).toBe(false);
  });

  it('with fewer than four readings, takes the last minus the first', () => {
    expect(lagFloorGrowth([])).toBe(0);
    expect(lagFloorGrowth([{ at: 0, lag: 50 }])).toBe(0);
    expect(lagFloorGrowth([{ at: 0, lag: 50 }, { at: 1_000, lag: 20 }, { at: 2_000, lag: 400 }])).toBe(350);
  });

  it('names every reason: delivered short, refused requests, a late generator', () => {
    const verdict = judgeStep(keptUp(5000, { delivered: 18_000, refused: 200, accepted: 29_800, sentLate: 3000, backlogEnd: 300 + 11_800 }), 0.05);
    expect(verdict.sustained).toBe(false);
    expect(verdict.reasons).toEqual([
      'generator behind schedule (3000 events sent late)',
      'ingest refused 200 events',
      'delivered 3,000/s of 5,000/s',
      'backlog grew by 11800 events',
    ]);
  });
});

describe('nextRampAction', () => {
  it('starts at the start rate and steps up by the factor, in whole batches', () => {
    expect(nextRampAction([], DEFAULT_RAMP)).toEqual({ kind: 'step', rate: 2000 });
    expect(nextRampAction([sustained(2000)], DEFAULT_RAMP)).toEqual({ kind: 'step', rate: 2500 });
    expect(nextRampAction([sustained(2000), sustained(2500)], DEFAULT_RAMP)).toEqual({ kind: 'step', rate: 3100 });
  });

  it('after the first failed step, bisects towards it at most twice, then holds the best sustained rate', () => {
    const upTo3100 = [sustained(2000), sustained(2500), failed(3100)];
    expect(nextRampAction(upTo3100, DEFAULT_RAMP)).toEqual({ kind: 'step', rate: 2800 });

    expect(nextRampAction([...upTo3100, sustained(2800)], DEFAULT_RAMP)).toEqual({ kind: 'step', rate: 3000 });
    const heldMidpoint = nextRampAction([...upTo3100, sustained(2800), failed(3000)], DEFAULT_RAMP);
    expect(heldMidpoint).toMatchObject({ kind: 'hold', rate: 2800 });
    expect(heldMidpoint.kind === 'hold' && heldMidpoint.why).toContain('3,000/s was not sustained');

    const failedMidpoint = [...upTo3100, failed(2800)];
    expect(nextRampAction(failedMidpoint, DEFAULT_RAMP)).toEqual({ kind: 'step', rate: 2700 });
    const twiceFailed = nextRampAction([...failedMidpoint, failed(2700)], DEFAULT_RAMP);
    expect(twiceFailed).toMatchObject({ kind: 'hold', rate: 2500 });
    expect(twiceFailed.kind === 'hold' && twiceFailed.why).toContain('2,700/s was not sustained: delivered 2,250/s of 2,700/s');
  });

  it('halves the rate while not even the start rate holds, then bisects upwards', () => {
    // An overloaded step delivers less than the pipeline can carry: 2,000/s offered, 460 delivered.
    const overloaded = judgeStep(keptUp(2000, { delivered: 2760, backlogEnd: 300 + 9240 }), 0.05);
    expect(nextRampAction([overloaded], DEFAULT_RAMP)).toEqual({ kind: 'step', rate: 1000 });
    expect(nextRampAction([overloaded, failed(1000)], DEFAULT_RAMP)).toEqual({ kind: 'step', rate: 500 });
    expect(nextRampAction([overloaded, sustained(1000)], DEFAULT_RAMP)).toEqual({ kind: 'step', rate: 1500 });
    expect(nextRampAction([overloaded, sustained(1000), failed(1500)], DEFAULT_RAMP)).toEqual({ kind: 'step', rate: 1300 });
    const held = nextRampAction([overloaded, sustained(1000), failed(1500), sustained(1300)], DEFAULT_RAMP);
    expect(held).toMatchObject({ kind: 'hold', rate: 1300 });
    expect(held.kind === 'hold' && held.why).toContain('1,500/s was not sustained');
  });

  it('holds below what was delivered when nothing held down to the smallest rate', () => {
    const steps = [2000, 1000, 500, 300, 200, 100].map((rate) => failed(rate));
    const action = nextRampAction(steps, DEFAULT_RAMP);
    expect(action).toMatchObject({ kind: 'hold', rate: 100 });
    expect(action.kind === 'hold' && action.why).toContain('no step was sustained; 100/s was not sustained');
  });

  it('does not refine a gap of 10 % or less', () => {
    const failedJustAbove = judgeStep(keptUp(2200, { delivered: 11_000, backlogEnd: 300 + 2200 }), 0.05);
    expect(nextRampAction([sustained(2000), failedJustAbove], DEFAULT_RAMP)).toMatchObject({ kind: 'hold', rate: 2000 });
  });

  it('holds the best rate when the step limit stops the search', () => {
    const policy = { ...DEFAULT_RAMP, maxSteps: 2 };
    expect(nextRampAction([failed(2000), sustained(1000)], policy)).toMatchObject({ kind: 'hold', rate: 1000 });
    expect(nextRampAction([failed(2000), failed(1000)], policy)).toMatchObject({ kind: 'hold', rate: 700 });
  });

  it('stops when the delivered rate stops rising', () => {
    const flat = { ...sustained(3100), deliveredRate: 2550 };
    expect(nextRampAction([sustained(2000), sustained(2500), flat], DEFAULT_RAMP)).toMatchObject({ kind: 'hold', rate: 2500 });
  });

  it('stops at the step and rate limits', () => {
    const policy = { ...DEFAULT_RAMP, maxSteps: 2 };
    expect(nextRampAction([sustained(2000), sustained(2500)], policy)).toMatchObject({ kind: 'hold', rate: 2500 });
    expect(nextRampAction([sustained(2000)], { ...DEFAULT_RAMP, maxRate: 2400 })).toMatchObject({ kind: 'hold', rate: 2000 });
  });

  it('rounds rates to whole batches of 100 events', () => {
    expect(roundRate(3906.25)).toBe(3900);
    expect(roundRate(20)).toBe(100);
  });
});
