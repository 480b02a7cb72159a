/**
 * The BODY_TIMEOUT_MS deadlines of the bodies being read, with one timer between them. Every body
 * gets the same time, so the deadlines fall in the order the reads began: only the oldest read
 * still waiting needs a timer. A timer per body (set as its reading began, cleared as it ended)
 * cost a few per cent of a SELECT 1's CPU; here a read costs a small record, linked in and out.
 */
import { TIMER_MAX_MS } from './timer-limit';

/** A read being watched: its deadline and what to do when it passes. */
interface Watched {
  readonly deadline: number;
  readonly expire: () => void;
  previous: Watched | undefined;
  next: Watched | undefined;
}

export class BodyDeadlines {
  /** The oldest read still waiting; its deadline comes first. */
  private oldest: Watched | undefined;
  private newest: Watched | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly timeoutMs: number) {}

  /**
   * Calls `expire` once `timeoutMs` have passed, unless the returned function is called first
   * (the body arrived, or its reading failed otherwise).
   */
  watch(expire: () => void): () => void {
    const watched: Watched = {
      deadline: performance.now() + this.timeoutMs,
      expire,
      previous: this.newest,
      next: undefined,
    };
    if (this.newest) this.newest.next = watched;
    else this.oldest = watched;
    this.newest = watched;
    this.timer ??= this.arm(this.timeoutMs);
    return () => this.unlink(watched);
  }

  private unlink(watched: Watched): void {
    const { previous, next } = watched;
    // Already expired or unlinked: nothing links to it any more.
    if (!previous && !next && this.oldest !== watched) return;
    if (previous) previous.next = next;
    else this.oldest = next;
    if (next) next.previous = previous;
    else this.newest = previous;
    watched.previous = undefined;
    watched.next = undefined;
  }

  /**
   * The one timer: set for the oldest read's deadline. A read that ends leaves it alone; when it
   * fires, it expires every read past its deadline and is set again for the next, if any.
   */
  private arm(delayMs: number): NodeJS.Timeout {
    // Rounded up: a timer may fire a fraction of a millisecond before performance.now() says
    // its delay is over, and a read is never expired early (a timer that fires early is set again).
    const timer = setTimeout(
      () => this.expireDue(),
      Math.min(TIMER_MAX_MS, Math.max(1, Math.ceil(delayMs))),
    );
    // Sockets keep a server's process alive, not the deadlines of their bodies.
    timer.unref();
    return timer;
  }

  private expireDue(): void {
    this.timer = undefined;
    const now = performance.now();
    for (let due = this.oldest; due && due.deadline <= now; due = this.oldest) {
      this.unlink(due);
      due.expire();
    }
    if (this.oldest) this.timer = this.arm(this.oldest.deadline - performance.now());
  }
}

/** One registry per timeout, shared by every reader that uses it (the app and the direct path). */
const registries = new Map<number, BodyDeadlines>();

export function bodyDeadlinesFor(timeoutMs: number): BodyDeadlines {
  let registry = registries.get(timeoutMs);
  if (!registry) {
    registry = new BodyDeadlines(timeoutMs);
    registries.set(timeoutMs, registry);
  }
  return registry;
}
