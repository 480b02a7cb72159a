/**
 * What one pool knows of whether its target keeps session state (docs/decisions.md 10.32): when
 * to probe, and how long what was found holds. A verdict that lets a request run (`kept`) is
 * never used once it may be stale; one that refuses may be, while a new probe runs beside it.
 */
import type { SessionStateVerdict } from '@sqlgate/core';
import type { SqlgateClient } from './client';
import { probeSessionState, type ProbeResult } from './transaction-pooling';

/**
 * The longest a step of the probe may wait for the server. A session pooler answers each at once;
 * so does a direct server that is not overloaded.
 */
const PROBE_STEP_LIMIT_MS = 2000;

/**
 * How long a pooler not shown to keep state is refused as a transaction pooler before it is
 * probed again: a session pooler whose server connections were all taken during the probe is one.
 */
const UNPROVEN_FOR_MS = 60_000;

interface Known {
  verdict: SessionStateVerdict;
  /**
   * For a direct server's `kept`, the pool's physical connections opened before the probe began:
   * the verdict holds for them. Every other verdict holds for every connection of the pool.
   */
  covers: number | undefined;
  /** performance.now() when it was found. */
  at: number;
}

export class SessionStateProbe {
  private known: Known | undefined;
  private probing: Promise<SessionStateVerdict> | undefined;
  /** Physical connections the pool has opened, and the number each was given. */
  private opened = 0;
  private readonly openedAs = new WeakMap<object, number>();
  private readonly limitMs: number;

  constructor(
    /** A client of the target outside the pool: the probe uses clients of its own. */
    private readonly openClient: () => SqlgateClient,
    connectTimeoutMs: number,
  ) {
    this.limitMs = Math.min(connectTimeoutMs, PROBE_STEP_LIMIT_MS);
  }

  /**
   * The pool opened a physical connection. A direct server's `kept` found before may not hold for
   * it: a pooler may have been put in front of the address since.
   */
  connectionOpened(client: object): void {
    this.openedAs.set(client, ++this.opened);
  }

  /**
   * What is known for `client`'s connection, probed when not known or current; `unknown` (a first
   * step that could not finish) is not remembered.
   */
  verdictFor(client: object): Promise<SessionStateVerdict> {
    const { known } = this;
    if (!known) return this.probe();
    const { verdict, covers, at } = known;
    if (verdict.kind === 'kept') {
      const covered = covers === undefined || (this.openedAs.get(client) ?? 0) <= covers;
      return covered ? Promise.resolve(verdict) : this.probe();
    }
    if (verdict.kind === 'pooler-unproven' && performance.now() - at >= UNPROVEN_FOR_MS) {
      void this.probe();
    }
    return Promise.resolve(verdict);
  }

  /** One probe at a time: requests that need to know meanwhile wait for the same one. */
  private probe(): Promise<SessionStateVerdict> {
    if (this.probing) return this.probing;
    const covers = this.opened;
    const probing = probeSessionState(this.openClient, this.limitMs)
      .then((result) => this.remember(result, covers))
      .finally(() => (this.probing = undefined));
    this.probing = probing;
    return probing;
  }

  private remember({ verdict, poolerSeen }: ProbeResult, covers: number): SessionStateVerdict {
    const now = performance.now();
    const before = this.known;
    const direct = verdict.kind === 'kept' && !poolerSeen;
    if (before && before.verdict.kind !== 'kept' && (verdict.kind === 'unknown' || direct)) {
      // A refusal stands. A direct server now at the address does not lift it either: the pool's
      // connections opened before may still go through the pooler.
      before.at = now;
      return before.verdict;
    }
    if (verdict.kind === 'unknown') {
      // A direct server's `kept` is not known to hold any longer.
      this.known = undefined;
      return verdict;
    }
    // Neither a session pooler's `kept` nor a refusal is probed again for new connections. That
    // probe of a session pooler would need two of its server connections beyond those the pool
    // holds, which a busy pool may not leave, and it would refuse what was shown to work.
    this.known = { verdict, covers: direct ? covers : undefined, at: now };
    return verdict;
  }
}
