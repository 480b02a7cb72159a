/**
 * How often one client's cancels by request id may cancel nothing (docs/decisions.md 10.34). Each
 * request can be guessed at only a few times (core's FAILED_CANCELS_PER_REQUEST); this bounds how
 * fast one client can sweep many ids, or lock out their owners, by failing.
 *
 * A client holds FAILED_CANCELS_PER_CLIENT failures, and is given one back every
 * FAILED_CANCEL_REFILL_MS. With none left its cancels are not tried until one comes back (429):
 * trying them would answer a right guess, and the limit would limit nothing. A cancel that
 * cancels something costs nothing, so a client cancelling its own requests is never limited, and
 * one client's failures never limit another client.
 */

export const FAILED_CANCELS_PER_CLIENT = 10;
export const FAILED_CANCEL_REFILL_MS = 6_000;
/**
 * Clients remembered at most; past it the one whose last failure is oldest is forgotten (its
 * failures with it). The per-request limit does not depend on this one.
 */
const CLIENTS_REMEMBERED = 10_000;

/** What trying a cancel gave: whether it cancelled anything, or how long the client must wait. */
export type CancelVerdict = { cancelled: boolean } | { retryAfterMs: number };

export class FailedCancelLimit {
  /** Failures still counted per client, as of `at`; one is forgiven every FAILED_CANCEL_REFILL_MS. */
  private readonly clients = new Map<string, { failures: number; at: number }>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /**
   * Counts a failure for `client` before its cancel is tried, so that cancels sent side by side
   * cannot all pass while none has failed yet: 0 when the cancel may be tried (give the failure
   * back with `succeeded` if it cancels something), else how long the client must wait.
   */
  take(client: string): number {
    const failures = this.failuresOf(client);
    const excess = failures - (FAILED_CANCELS_PER_CLIENT - 1);
    if (excess > 0) return Math.ceil(excess * FAILED_CANCEL_REFILL_MS);
    this.set(client, failures + 1);
    return 0;
  }

  /** The cancel `take` let through cancelled something: its failure is given back. */
  succeeded(client: string): void {
    this.set(client, Math.max(0, this.failuresOf(client) - 1));
  }

  private set(client: string, failures: number): void {
    // Deleted first so that the map's order stays the order of last changes.
    this.clients.delete(client);
    if (failures === 0) return;
    this.clients.set(client, { failures, at: this.now() });
    if (this.clients.size > CLIENTS_REMEMBERED) {
      this.clients.delete(this.clients.keys().next().value as string);
    }
  }

  private failuresOf(client: string): number {
    const known = this.clients.get(client);
    if (known === undefined) return 0;
    const failures = known.failures - (this.now() - known.at) / FAILED_CANCEL_REFILL_MS;
    return Math.max(0, failures);
  }
}

/** Tries a cancel where the requests run; true when it cancelled anything. */
export type CancelAttempt = (requestId: string, body: unknown) => boolean | Promise<boolean>;

/** Cancels tried only for clients within their limit, failures counted. */
export class LimitedCancels {
  constructor(
    private readonly attempt: CancelAttempt,
    private readonly limit = new FailedCancelLimit(),
  ) {}

  async cancel(requestId: string, body: unknown, client: string): Promise<CancelVerdict> {
    const retryAfterMs = this.limit.take(client);
    if (retryAfterMs > 0) return { retryAfterMs };
    const cancelled = await this.attempt(requestId, body);
    if (cancelled) this.limit.succeeded(client);
    return { cancelled };
  }
}
