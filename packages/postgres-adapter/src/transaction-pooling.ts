/**
 * Whether a target keeps one backend for each client connection from one transaction to the next,
 * as PostgreSQL itself and a pooler in session mode do, or hands each transaction to whichever
 * backend is free, as PgBouncer in transaction or statement mode does (docs/decisions.md 10.32).
 * Behind the latter, state a statement leaves for later transactions (SET, a temporary table, an
 * advisory lock, a session of 10.26) stays on a backend other client connections get.
 *
 * Nothing in the protocol says so; two facts of its behaviour do, measured against PgBouncer 1.18:
 * - a pooler makes up the BackendKeyData it sends, so its process id is not `pg_backend_pid()`
 *   (equal on every direct connection, different through PgBouncer in every mode): the probe
 *   stops there when they are equal;
 * - a backend that answered one client connection's round trip is free for another client
 *   connection's transaction only behind a transaction pooler, and one client connection's two
 *   round trips reach two backends only there. The probe's two round trips on the connection, and
 *   a transaction of a second client connection in between, show one or the other in every pool
 *   mode and order PgBouncer has (its default LIFO and server_round_robin, one backend or four);
 *   in session mode never. Statement mode refuses the second client's BEGIN, which PostgreSQL
 *   itself never does.
 * A transaction pooler whose other clients take and release backends between the probe's steps
 * may go unseen: it is then taken for a session pooler.
 */
import { SilenceWatchdog } from './silence-watchdog';
import type { SqlgateClient } from './client';

/** What the probe found; undefined when it could not finish (nothing is then concluded). */
export type SessionStateVerdict = boolean | undefined;

/**
 * The longest a step of the probe may take. A second client that waits this long for a backend
 * while the probed one is idle waits behind a session pooler whose backends are all taken; a
 * transaction pooler would have lent it the idle one's at once.
 */
const PROBE_STEP_LIMIT_MS = 2000;

/**
 * After a probe that could not finish (a server too slow or too busy to answer within the limit),
 * the state is taken to be kept for this long before the next request probes again: every request
 * would otherwise wait for a probe that keeps failing.
 */
const INCONCLUSIVE_FOR_MS = 60_000;

/** What one pool knows of its target: probed by the first request that asks, then kept. */
export class SessionStateProbe {
  private verdict: Promise<boolean> | undefined;
  private inconclusiveUntil = 0;
  private readonly limitMs: number;

  constructor(
    /** A client of the target outside the pool: the probe uses clients of its own. */
    private readonly openClient: () => SqlgateClient,
    connectTimeoutMs: number,
  ) {
    this.limitMs = Math.min(connectTimeoutMs, PROBE_STEP_LIMIT_MS);
  }

  /**
   * Whether the target keeps session state between transactions, probed when not yet known. The
   * probe runs on clients of its own, never on a connection lent to a caller: a server too slow
   * for its limit makes it inconclusive, and the state is then taken to be kept, rather than a
   * caller's request failing for it.
   */
  kept(): Promise<boolean> {
    if (this.verdict) return this.verdict;
    if (performance.now() < this.inconclusiveUntil) return KEPT;
    const probing = probeSessionState(this.openClient, this.limitMs).then((verdict) => {
      if (verdict !== undefined) return verdict;
      this.verdict = undefined;
      this.inconclusiveUntil = performance.now() + INCONCLUSIVE_FOR_MS;
      return true;
    });
    this.verdict = probing;
    return probing;
  }
}

const KEPT = Promise.resolve(true);

/**
 * Whether a client of the target keeps its backend between transactions; a second client takes
 * part when a pooler is seen. Every step is bounded by `limitMs`. A second client that waits that
 * long for a backend while the first is idle waits behind a session pooler whose backends are all
 * taken (a transaction pooler would have given it the first one's): the target keeps session
 * state.
 */
async function probeSessionState(
  openClient: () => SqlgateClient,
  limitMs: number,
): Promise<SessionStateVerdict> {
  const client = openClient();
  client.on('error', () => undefined);
  let clean = false;
  try {
    const first = await within(client, limitMs, async () => {
      await client.connect();
      return backendPidOf(client);
    });
    let verdict: SessionStateVerdict;
    if (first === client.serverSocket.framing.facts.processId) verdict = true;
    else if ((await backendPid(client, limitMs)) !== first) verdict = false;
    else {
      verdict = await whileAnotherTransactionRuns(openClient(), limitMs, async (other) => {
        if (other === first) return false;
        return (await backendPid(client, limitMs)) === first;
      });
    }
    clean = true;
    return verdict;
  } catch {
    return undefined;
  } finally {
    if (clean) void client.end().catch(() => undefined);
    else client.serverSocket.destroy();
  }
}

/**
 * Opens `probe`, begins a transaction on it and calls `check` with its backend's pid while the
 * transaction holds that backend; the probe is closed after. What the probe's own failure tells,
 * when it fails: a BEGIN refused by the server is a statement pooler's refusal (no backend is kept
 * even for a transaction); a wait past `limitMs`, a session pooler's whose backends are taken.
 */
async function whileAnotherTransactionRuns(
  probe: SqlgateClient,
  limitMs: number,
  check: (otherPid: number) => Promise<SessionStateVerdict>,
): Promise<SessionStateVerdict> {
  probe.on('error', () => undefined);
  let ended = false;
  try {
    let other: number;
    try {
      other = await within(probe, limitMs, async () => {
        await probe.connect();
        try {
          await probe.query('BEGIN');
        } catch (error) {
          if (typeof (error as { severity?: unknown }).severity === 'string') {
            throw new StatementPooling();
          }
          throw error;
        }
        return backendPidOf(probe);
      });
    } catch (error) {
      if (error instanceof StatementPooling) return false;
      return (error as { code?: unknown }).code === 'SERVER_TIMEOUT' ? true : undefined;
    }
    const verdict = await check(other);
    // Ended cleanly, the pooler's backend goes back to its pool rather than being closed.
    await within(probe, limitMs, () => probe.query('ROLLBACK'));
    ended = true;
    return verdict;
  } finally {
    if (ended) void probe.end().catch(() => undefined);
    else probe.serverSocket.destroy();
  }
}

/** The server refused BEGIN. */
class StatementPooling extends Error {}

/** The pid of the backend that answers `client`'s next round trip, within `limitMs`. */
function backendPid(client: SqlgateClient, limitMs: number): Promise<number> {
  return within(client, limitMs, () => backendPidOf(client));
}

async function backendPidOf(client: SqlgateClient): Promise<number> {
  const { rows } = await client.query<{ pid: unknown }>('SELECT pg_backend_pid()::text AS pid');
  const pid = Number(rows[0]?.pid);
  if (!Number.isInteger(pid)) throw new Error('pg_backend_pid() answered no process id');
  return pid;
}

/**
 * `work` on `client`, whose connection is closed when its server stays silent for `limitMs`:
 * `work` then fails with SERVER_TIMEOUT.
 */
async function within<T>(
  client: SqlgateClient,
  limitMs: number,
  work: () => Promise<T>,
): Promise<T> {
  const watchdog = new SilenceWatchdog(client.serverSocket, limitMs, limitMs);
  try {
    return await work();
  } finally {
    watchdog.stop();
  }
}
