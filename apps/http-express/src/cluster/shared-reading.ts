/**
 * One reading shared by every caller for a short while: while a gathering runs, and for `reuseMs`
 * after it ended, callers get its answer instead of starting another. A flood of GET /metrics
 * then costs the workers one gathering per `reuseMs`, not one per request: asked hundreds of times
 * at once, they could otherwise miss a write's relay deadline and be replaced (docs/decisions.md
 * 10.28).
 */
export class SharedReading<T> {
  private reading: Promise<T> | undefined;
  /** When the reading ended; undefined while it runs. */
  private endedAt: number | undefined;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly reuseMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The next caller reads afresh (what was read is known to be out of date). */
  forget(): void {
    this.reading = undefined;
  }

  get(): Promise<T> {
    const shared =
      this.reading !== undefined &&
      (this.endedAt === undefined || this.now() - this.endedAt < this.reuseMs);
    if (shared) return this.reading as Promise<T>;
    const reading = this.read();
    this.reading = reading;
    this.endedAt = undefined;
    void reading.then(
      // Reused for reuseMs from its end, however long it took.
      () => {
        if (this.reading === reading) this.endedAt = this.now();
      },
      // A failed reading is not reused: the next caller tries again.
      () => {
        if (this.reading === reading) this.reading = undefined;
      },
    );
    return reading;
  }
}
