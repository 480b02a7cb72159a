/**
 * The longest delay a Node timer takes: 2^31 - 1 ms, about 24.8 days. A longer one fires after
 * 1 ms (with a warning on stderr), so every delay computed from a setting or a request stops here.
 */
export const TIMER_MAX_MS = 2 ** 31 - 1;
