/**
 * What sqlgate reads of an AbortSignal. A DOM/Node AbortSignal fits; so does a lighter one made
 * for a single request: an HTTP adapter that makes an AbortController for every request spends
 * more on it than on planning the request (see docs/benchmarks.md).
 *
 * `abort` fires at most once, so every listener is a once-listener, whatever `options` says.
 */
export interface AbortSignalLike {
  readonly aborted: boolean;
  /**
   * True when the request was stopped for a caller still there to read the answer (a server ending
   * the grace period of its shutdown), set before `abort` fires: the request then answers as a
   * cancelled one (REQUEST_CANCELLED), not as one whose caller went away.
   */
  readonly cancelled?: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}
