/**
 * Bytes of rows held in memory: each request's own budget (MAX_RESULT_BYTES) and the one all share
 * (MAX_RESULT_BYTES_TOTAL, docs/decisions.md 10.2). A request's first FREE_BYTES are its own, so
 * small answers are never cut; past them it draws on the shared budget until `release`, each
 * caller at most its share (docs/decisions.md 10.37).
 */
import type { ResultBudget } from '../ports/connections';

/** Row bytes every request may hold without drawing on the shared budget. */
export const FREE_BYTES = 256 * 1024;

/** The part of the shared budget one caller may hold, unless one answer may hold more. */
const CALLER_SHARE = 1 / 4;

/** An answer's hold on the shared budget, handed to whoever writes it (docs/decisions.md 10.37). */
export interface HeldResult {
  /** It holds some of the shared budget now. */
  readonly holdsSharedBytes: boolean;
  /** The answer now holds `bytes`, its written form's size, even past what is left (not streams). */
  holdAs(bytes: number): void;
  /** Calls `listener` once if another caller finds the budget held while this holds some. */
  onContended(listener: () => void): void;
  /** Gives back what the answer holds. Idempotent. */
  release(): void;
}

/**
 * The row bytes all requests may hold beyond their free bytes, and each caller's part (a caller is
 * a pool id): a quarter, or one answer's MAX_RESULT_BYTES when that is more.
 */
export class SharedResultBudget {
  /** Bytes requests may still draw; below zero when answers were counted again larger. */
  availableBytes: number;
  /** The most one caller may hold. */
  readonly callerShareBytes: number;
  private readonly heldByCaller = new Map<string, number>();
  private readonly contentionListeners = new Set<() => void>();

  constructor(
    readonly totalBytes: number,
    maxResultBytes = totalBytes,
  ) {
    this.availableBytes = totalBytes;
    this.callerShareBytes = Math.max(
      Math.ceil(totalBytes * CALLER_SHARE),
      Math.min(maxResultBytes, totalBytes),
    );
  }

  /** Bytes `caller` may draw now: what is left, within its share. */
  drawableBy(caller: string): number {
    return Math.max(0, Math.min(this.availableBytes, this.shareLeftOf(caller)));
  }

  /** What is left, rather than `caller`'s share, limits what it may draw: others hold the rest. */
  heldByOthersFor(caller: string): boolean {
    return this.availableBytes < this.shareLeftOf(caller);
  }

  /** `caller` draws `bytes` (gives them back when negative). */
  draw(caller: string, bytes: number): void {
    if (bytes === 0) return;
    this.availableBytes -= bytes;
    const held = (this.heldByCaller.get(caller) ?? 0) + bytes;
    if (held > 0) this.heldByCaller.set(caller, held);
    else this.heldByCaller.delete(caller);
  }

  /** Calls `listener` once at the next `contended()`, unless `forget` is called first. */
  listenForContention(listener: () => void): { forget(): void } {
    const once = (): void => {
      this.contentionListeners.delete(once);
      listener();
    };
    this.contentionListeners.add(once);
    return { forget: () => this.contentionListeners.delete(once) };
  }

  /** A request could not have what it asked for because others hold the budget: tell the holders. */
  contended(): void {
    for (const listener of [...this.contentionListeners]) listener();
  }

  private shareLeftOf(caller: string): number {
    return this.callerShareBytes - (this.heldByCaller.get(caller) ?? 0);
  }
}

/** What limited a request's rows: the budget's remainder, held by others, or the caller's share. */
export type SharedLimit = 'others' | 'caller';

/** What both kinds of answers share: drawing for one caller, giving back, hearing of contention. */
abstract class SharedDraw implements HeldResult {
  /** Bytes drawn on the shared budget and not given back. */
  protected drawnBytes = 0;
  protected released = false;
  private contention: { forget(): void } | undefined;
  /** The shared budget limited this request at some point, and by whom. */
  sharedLimit: SharedLimit | undefined;

  constructor(
    protected readonly shared: SharedResultBudget | undefined,
    protected readonly caller: string,
  ) {}

  get holdsSharedBytes(): boolean {
    return this.drawnBytes > 0;
  }

  /** @see HeldResult.holdAs */
  abstract holdAs(bytes: number): void;

  onContended(listener: () => void): void {
    if (!this.shared || this.released || this.contention) return;
    this.contention = this.shared.listenForContention(listener);
  }

  release(): void {
    if (!this.shared || this.released) return;
    this.released = true;
    this.drawTo(0);
    this.contention?.forget();
  }

  /** Notes that the shared budget limited this request, and by whom. */
  protected noteLimit(): void {
    if (!this.shared) return;
    if (this.shared.heldByOthersFor(this.caller)) this.sharedLimit = 'others';
    else this.sharedLimit ??= 'caller';
  }

  protected drawTo(bytes: number): void {
    this.shared?.draw(this.caller, bytes - this.drawnBytes);
    this.drawnBytes = bytes;
  }
}

/** One request's budget: connections lower `remainingBytes` by each row (or refund it). */
export class RequestResultBudget extends SharedDraw implements ResultBudget {
  /** Bytes of the request's own budget not yet spent. */
  private ownBytes: number;
  /** Bytes spent so far (net of what was given back). */
  private spentBytes = 0;

  constructor(ownBytes: number, shared?: SharedResultBudget, caller = '') {
    super(shared, caller);
    this.ownBytes = ownBytes;
  }

  get remainingBytes(): number {
    if (!this.shared || this.released) return this.ownBytes;
    const free = Math.max(0, FREE_BYTES - this.spentBytes);
    const allowed = free + this.shared.drawableBy(this.caller);
    if (allowed >= this.ownBytes) return this.ownBytes;
    this.noteLimit();
    return allowed;
  }

  set remainingBytes(value: number) {
    const spent = this.remainingBytes - value;
    this.ownBytes -= spent;
    this.spentBytes += spent;
    // After release the rows are no longer counted: a statement still reading then (one being
    // stopped) must not draw on what other requests hold.
    if (!this.shared || this.released) return;
    this.drawTo(Math.max(0, this.spentBytes - FREE_BYTES));
  }

  holdAs(bytes: number): void {
    if (!this.shared || this.released) return;
    this.spentBytes = bytes;
    this.drawTo(Math.max(0, bytes - FREE_BYTES));
  }
}

/**
 * The rows a streamed answer holds in flight (docs/decisions.md 10.2, 10.22): past FREE_BYTES they
 * draw on the shared budget like a JSON answer's, or are refused.
 */
export class StreamedRowBudget extends SharedDraw {
  /** Bytes of the rows admitted and not yet freed. */
  private heldBytes = 0;

  constructor(shared?: SharedResultBudget, caller = '') {
    super(shared, caller);
  }

  /** Takes `bytes` for a row about to be read; false when the shared budget cannot give them. */
  admit(bytes: number): boolean {
    if (!this.shared || this.released) return true;
    const held = this.heldBytes + bytes;
    const drawn = Math.max(0, held - FREE_BYTES);
    if (drawn - this.drawnBytes > this.shared.drawableBy(this.caller)) {
      this.noteLimit();
      if (this.sharedLimit === 'others') this.shared.contended();
      return false;
    }
    this.drawTo(drawn);
    this.heldBytes = held;
    return true;
  }

  /** A row admitted before is no longer held. */
  free(bytes: number): void {
    if (!this.shared || this.released) return;
    this.heldBytes = Math.max(0, this.heldBytes - bytes);
    this.drawTo(Math.max(0, this.heldBytes - FREE_BYTES));
  }

  /** A stream writes nothing whole: its rows in flight are what it holds. */
  holdAs(): void {}

  /** The stream is done with its rows: all it drew goes back, and later rows draw nothing. */
  close(): void {
    this.release();
    this.heldBytes = 0;
  }
}
