/**
 * Bytes of rows held in memory: each request's own budget (MAX_RESULT_BYTES), and the one all
 * requests share (MAX_RESULT_BYTES_TOTAL, docs/decisions.md 10.2). Without the shared bound, every
 * request may hold its own maximum at once, and a few dozen callers asking for large answers
 * together would exhaust the process's heap.
 *
 * A request's first FREE_BYTES are its own, so that small answers are never cut because large ones
 * fill the shared budget; past them it draws on the shared budget, and gives back what it drew when
 * its answer is done (`release`).
 */
import type { ResultBudget } from '../ports/connections';

/** Row bytes every request may hold without drawing on the shared budget. */
export const FREE_BYTES = 256 * 1024;

/** The row bytes all requests of a service may hold at once beyond their free bytes. */
export class SharedResultBudget {
  /** Bytes requests may still draw; never below zero. */
  availableBytes: number;

  constructor(readonly totalBytes: number) {
    this.availableBytes = totalBytes;
  }
}

/**
 * One request's budget, as the connections charge it: they read `remainingBytes` and lower it by
 * what each row costs (or raise it again, for rows of a round trip sent again).
 */
export class RequestResultBudget implements ResultBudget {
  /** Bytes of the request's own budget not yet spent. */
  private ownBytes: number;
  /** Bytes spent so far (net of what was given back). */
  private spentBytes = 0;
  /** Bytes drawn on the shared budget: what was spent past FREE_BYTES. */
  private drawnBytes = 0;
  private released = false;
  /**
   * The shared budget was, at some point, what limited this request: a cut by bytes then came
   * from the answers of others, not only from the request's own limit.
   */
  sharedBoundReached = false;

  constructor(
    ownBytes: number,
    private readonly shared?: SharedResultBudget,
  ) {
    this.ownBytes = ownBytes;
  }

  get remainingBytes(): number {
    if (!this.shared || this.released) return this.ownBytes;
    const free = Math.max(0, FREE_BYTES - this.spentBytes);
    const allowed = free + this.shared.availableBytes;
    if (allowed >= this.ownBytes) return this.ownBytes;
    this.sharedBoundReached = true;
    return Math.max(0, allowed);
  }

  set remainingBytes(value: number) {
    const spent = this.remainingBytes - value;
    this.ownBytes -= spent;
    this.spentBytes += spent;
    // After release the rows are no longer counted: a statement still reading then (one being
    // stopped) must not draw on what other requests hold.
    if (!this.shared || this.released) return;
    const drawn = Math.max(0, this.spentBytes - FREE_BYTES);
    this.shared.availableBytes -= drawn - this.drawnBytes;
    this.drawnBytes = drawn;
  }

  /** Bytes drawn on the shared budget and not yet given back: release() has something to do. */
  get holdsSharedBytes(): boolean {
    return this.drawnBytes > 0;
  }

  /** The answer is done with its rows: what was drawn goes back to the shared budget. Idempotent. */
  release(): void {
    if (!this.shared || this.released) return;
    this.released = true;
    this.shared.availableBytes += this.drawnBytes;
    this.drawnBytes = 0;
  }
}

/**
 * The rows a streamed answer holds in flight, between its connection and its client
 * (docs/decisions.md 10.2, 10.22). A stream keeps no result, but each row waits in memory until
 * its client took it, and a row may be as large as MAX_RESULT_BYTES: past FREE_BYTES in flight,
 * a stream's rows draw on the shared budget like a JSON answer's, or are refused.
 */
export class StreamedRowBudget {
  /** Bytes of the rows admitted and not yet freed. */
  private heldBytes = 0;
  /** Of those, the bytes drawn on the shared budget. */
  private drawnBytes = 0;
  private closed = false;
  /** A row was refused because the shared budget could not hold it. */
  sharedBoundReached = false;

  constructor(private readonly shared?: SharedResultBudget) {}

  /** Takes `bytes` for a row about to be read; false when the shared budget cannot give them. */
  admit(bytes: number): boolean {
    if (!this.shared || this.closed) return true;
    const held = this.heldBytes + bytes;
    const draw = Math.max(0, held - FREE_BYTES) - this.drawnBytes;
    if (draw > this.shared.availableBytes) {
      this.sharedBoundReached = true;
      return false;
    }
    this.shared.availableBytes -= draw;
    this.drawnBytes += draw;
    this.heldBytes = held;
    return true;
  }

  /** A row admitted before is no longer held. */
  free(bytes: number): void {
    if (!this.shared || this.closed) return;
    this.heldBytes = Math.max(0, this.heldBytes - bytes);
    const drawn = Math.max(0, this.heldBytes - FREE_BYTES);
    this.shared.availableBytes += this.drawnBytes - drawn;
    this.drawnBytes = drawn;
  }

  /** The stream is done with its rows: all it drew goes back, and later rows draw nothing. Idempotent. */
  close(): void {
    if (!this.shared || this.closed) return;
    this.closed = true;
    this.shared.availableBytes += this.drawnBytes;
    this.drawnBytes = 0;
    this.heldBytes = 0;
  }

  /** Bytes drawn on the shared budget and not yet given back. */
  get holdsSharedBytes(): boolean {
    return this.drawnBytes > 0;
  }
}
