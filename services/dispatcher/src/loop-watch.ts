/**
 * Whether this process is its own bottleneck right now: its event loop was blocked (a probe
 * came more than BLOCKED_GAP_MS late: GC, a burst of synchronous work), or it has been busy
 * more than BUSY_UTILISATION of the last second. While it is, a destination that is slow to
 * settle may only be waiting for this process: the dispatcher does not hold that against it.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

const PROBE_MS = 20;
const BLOCKED_GAP_MS = 100;
/** Blocked that recently still counts. */
const BLOCKED_MEMORY_MS = 1_000;
const UTILISATION_WINDOW_MS = 1_000;
const BUSY_UTILISATION = 0.8;

export class LoopWatch {
  private timer: NodeJS.Timeout | undefined;
  private lastProbeAt = Date.now();
  private blockedAt = Number.NEGATIVE_INFINITY;
  private windowStart: EventLoopUtilization = performance.eventLoopUtilization();
  private windowStartedAt = Date.now();
  private utilisation = 0;

  start(): void {
    this.timer = setInterval(() => this.probe(), PROBE_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  busy(now: number): boolean {
    // The probe may not have run yet after a block that just ended.
    if (now - this.lastProbeAt > BLOCKED_GAP_MS) this.blockedAt = now;
    return now - this.blockedAt < BLOCKED_MEMORY_MS || this.utilisation > BUSY_UTILISATION;
  }

  private probe(): void {
    const now = Date.now();
    if (now - this.lastProbeAt > BLOCKED_GAP_MS) this.blockedAt = now;
    this.lastProbeAt = now;
    if (now - this.windowStartedAt >= UTILISATION_WINDOW_MS) {
      const current = performance.eventLoopUtilization();
      this.utilisation = performance.eventLoopUtilization(current, this.windowStart).utilization;
      this.windowStart = current;
      this.windowStartedAt = now;
    }
  }
}
