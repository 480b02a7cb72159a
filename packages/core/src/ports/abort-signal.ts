/**
 * What sqlgate reads of an AbortSignal. A DOM/Node AbortSignal fits; so does a lighter one made
 * for a single request: an HTTP adapter that makes an AbortController for every request spends
 * more on it than on planning the request (see docs/benchmarks.md).
 *
 * `abort` fires at most once, so every listener is a once-listener, whatever `options` says.
 */
export interface AbortSignalLike {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}
