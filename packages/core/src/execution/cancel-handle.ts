/**
 * A request that can be cancelled from elsewhere before it has what a cancel stops (an execution
 * context, or the wait for a session's connection): the cancel is kept and reaches it once it exists.
 */

/** What a cancel stops: an ExecutionContext, or the opening of a session. */
export interface Cancellable {
  cancel(): void;
  /** Resolves once the CancelRequests sent have reached their server; undefined when none were. */
  cancelsSettled(): Promise<void> | undefined;
}

export class CancelHandle {
  private context: Cancellable | undefined;
  private requested = false;

  /** What runs the request; cancelled at once if a cancel came first. */
  attach(context: Cancellable): void {
    this.context = context;
    if (this.requested) context.cancel();
  }

  get cancelled(): boolean {
    return this.requested;
  }

  cancel(): void {
    this.requested = true;
    this.context?.cancel();
  }

  /** Resolves once the CancelRequests sent for the request have reached their server. */
  async settled(): Promise<void> {
    await this.context?.cancelsSettled();
  }
}
