/**
 * Waiting for an outcome instead of sleeping for a time: a sleep long enough on one machine is too
 * short on a loaded one, while a condition polled up to a generous deadline holds on both and
 * costs only the time the outcome really takes.
 */

export interface EventuallyOptions {
  /** How long to keep trying before failing. Default 10 s: far past any outcome a test awaits. */
  withinMs?: number;
  /** The pause between tries. Default 25 ms. */
  everyMs?: number;
}

export const EVENTUALLY_WITHIN_MS = 10_000;

/**
 * Runs `check` until it neither throws nor returns `false`, or until `withinMs` have passed; then
 * it throws `check`'s last error (an `expect` failure reads as such), or says that the condition
 * did not hold. `check` may be async; each try waits for the previous one.
 */
export async function eventually(
  check: () => unknown,
  { withinMs = EVENTUALLY_WITHIN_MS, everyMs = 25 }: EventuallyOptions = {},
): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    let failure: unknown;
    try {
      if ((await check()) !== false) return;
      failure = new Error(`the condition did not hold within ${withinMs} ms`);
    } catch (error) {
      failure = error;
    }
    if (Date.now() >= deadline) throw failure;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
