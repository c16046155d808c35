import { FRAME_MS } from '../core/limits.ts';

// Frame scheduling: engine events arrive far faster than a terminal should be redrawn (a fast
// model streams hundreds of deltas a second). Every change requests a frame; at most one flush
// runs per interval, so a 5,000-line reply costs a bounded number of renders, not one per delta.

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const SYSTEM_CLOCK: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export class FrameScheduler {
  private timer: unknown = null;
  private last = -Infinity;
  private disposed = false;
  /** Flushes run so far (the benchmark reads it). */
  frames = 0;

  constructor(
    private readonly flush: () => void,
    private readonly intervalMs: number = FRAME_MS,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  /** Asks for a frame: the first after a quiet spell runs on the next tick, later ones coalesce to the interval. */
  request(): void {
    if (this.disposed || this.timer !== null) return;
    const wait = Math.max(0, this.last + this.intervalMs - this.clock.now());
    this.timer = this.clock.setTimeout(() => this.run(), wait);
  }

  /** Flushes at once (a key press must echo without waiting for the interval). */
  now(): void {
    if (this.disposed) return;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.run();
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private run(): void {
    this.timer = null;
    this.last = this.clock.now();
    this.frames++;
    this.flush();
  }
}
