/** Time, injectable so timing logic is testable. */
export interface Clock {
  /** Milliseconds from an arbitrary origin, monotonic, sub-millisecond precision. */
  now(): number;
  /** Wall-clock time, for timestamps shown to users. */
  date(): Date;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  date: () => new Date(),
};
