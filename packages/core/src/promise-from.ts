/**
 * What `work` returns, as a promise: its own, or one rejected with what it threw. Code that chains
 * promises instead of awaiting them in an async function (each one costs a request a turn of the
 * microtasks, docs/decisions.md 10.29) keeps the async function's guarantee this way: a throw
 * becomes a rejection, never an exception thrown at the caller.
 */
export function promiseFrom<T>(work: () => Promise<T>): Promise<T> {
  try {
    return work();
  } catch (error) {
    return Promise.reject(error);
  }
}
