/**
 * The statistics view's samples and the lines of its chart. Pure: the view draws the points this
 * module computes.
 */
export interface StatsSample {
  /** Milliseconds since the epoch. */
  at: number;
  totalQueries: number;
  hitRate: number;
}

/** Samples older than this leave the chart. */
export const CHART_WINDOW_MS = 10 * 60_000;

/** Adds a sample and drops those that left the window. */
export function addSample(samples: readonly StatsSample[], sample: StatsSample): StatsSample[] {
  return [...samples, sample].filter((kept) => sample.at - kept.at <= CHART_WINDOW_MS);
}

/**
 * Statements counted between consecutive samples. A counter that went down (the server restarted,
 * the counters of another instance answered) starts again from zero rather than going negative.
 */
export function queriesPerInterval(
  samples: readonly StatsSample[],
): { at: number; count: number }[] {
  const counts: { at: number; count: number }[] = [];
  for (let i = 1; i < samples.length; i++) {
    const previous = samples[i - 1] as StatsSample;
    const current = samples[i] as StatsSample;
    const delta = current.totalQueries - previous.totalQueries;
    counts.push({ at: current.at, count: delta >= 0 ? delta : current.totalQueries });
  }
  return counts;
}

/** The chart covers the samples it has: at least a minute, at most CHART_WINDOW_MS. */
export const CHART_MIN_SPAN_MS = 60_000;

export function chartSpan(samples: readonly StatsSample[], now: number): number {
  const oldest = samples[0]?.at ?? now;
  return Math.min(CHART_WINDOW_MS, Math.max(CHART_MIN_SPAN_MS, now - oldest));
}

/**
 * An SVG polyline's points for values over time in a `width` × `height` box: time runs over the
 * `span` milliseconds ending at `now`, values from 0 (bottom) to `max` (top).
 */
export function polylinePoints(
  values: readonly { at: number; value: number }[],
  now: number,
  span: number,
  max: number,
  width: number,
  height: number,
): string {
  const top = max > 0 ? max : 1;
  return values
    .map(({ at, value }) => {
      const x = width - ((now - at) / span) * width;
      const y = height - (Math.min(Math.max(value, 0), top) / top) * height;
      return `${round(Math.max(0, x))},${round(y)}`;
    })
    .join(' ');
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
