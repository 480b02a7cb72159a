/**
 * What sqlgate reads of an AbortSignal: a Node one fits, and so does a lighter one per request.
 * `abort` fires at most once, so every listener is a once-listener.
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
