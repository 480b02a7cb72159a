/**
 * A request that can be cancelled from elsewhere before it has an execution context (while its
 * body is parsed, say): the cancel is kept and reaches the context once it exists.
 */
import type { ExecutionContext } from './context';

export class CancelHandle {
  private context: ExecutionContext | undefined;
  private requested = false;

  /** The context that runs the request's statements; cancelled at once if a cancel came first. */
  attach(context: ExecutionContext): void {
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
