/**
 * What `work` returns, as a promise, or one rejected with what it threw: an async function's
 * guarantee for code that chains instead (docs/decisions.md 10.29).
 */
export function promiseFrom<T>(work: () => Promise<T>): Promise<T> {
  try {
    return work();
  } catch (error) {
    return Promise.reject(error);
  }
}
