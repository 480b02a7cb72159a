/**
 * A session's connection as the strategies see it (docs/decisions.md 10.26): lent to each of its
 * requests in turn, never given back to the pool by one; a request lets go only of a broken one.
 */
import type {
  Connection,
  ConnectionProvider,
  RunOptions,
  ServerSettings,
} from '../ports/connections';
import type { Settled } from '../ports/settled';

export class PinnedConnection implements Connection {
  private brokenNoted = false;
  /** Settles when the request the connection is lent to gives it back; undefined when not lent. */
  private loan: { returned: Promise<void>; giveBack: () => void } | undefined;

  private readonly stopWatching: () => void;

  constructor(
    private readonly connection: Connection,
    /** Told once when the connection broke: a request found it so, or it closed while idle. */
    private readonly onBroken: () => void,
  ) {
    // A server restarted or a backend terminated while the session waits for its next request:
    // the session ends now, not at its expiry, and frees its place in the limits.
    this.stopWatching = connection.onClose?.(() => this.noteBroken()) ?? (() => undefined);
  }

  /**
   * Lends this connection to one request of the session, and tells how to read its SQL text: as
   * the session's own settings say (a SET standard_conforming_strings lasts for the session).
   */
  get provider(): Pick<ConnectionProvider, 'acquire' | 'serverSettings'> {
    return {
      acquire: () => this.lend(),
      serverSettings: () => this.serverSettings(),
    };
  }

  /**
   * Given back only once the CancelRequests sent for the request reached the server, or a late one
   * could stop the next request's statement (docs/decisions.md 10.26).
   */
  private async lend(): Promise<Settled<Connection>> {
    while (this.loan) await this.loan.returned;
    let giveBack!: () => void;
    const returned = new Promise<void>((resolve) => (giveBack = resolve));
    this.loan = { returned, giveBack };
    return { ok: true, value: this };
  }

  serverSettings(): ServerSettings | undefined {
    return this.connection.serverSettings?.();
  }

  /** The connection broke (found so by a request, or closed while idle); the session cannot go on. */
  get broken(): boolean {
    return this.brokenNoted;
  }

  run(sql: string, options: RunOptions) {
    return this.connection.run(sql, options);
  }

  runBatch(sql: readonly string[], options: RunOptions) {
    return this.connection.runBatch(sql, options);
  }

  transactionStatus() {
    return this.connection.transactionStatus();
  }

  cancel() {
    return this.connection.cancel();
  }

  abandon(): void {
    this.connection.abandon?.();
  }

  /**
   * The end of one request: the session keeps the connection, with its transaction and settings.
   * Only `destroy` (the request found it broken) is acted on.
   */
  release(options?: { resetSession?: boolean; destroy?: boolean }): void {
    if (options?.destroy) this.noteBroken();
    const loan = this.loan;
    this.loan = undefined;
    loan?.giveBack();
  }

  /** The end of the session: back to the pool, cleaned (ROLLBACK, DISCARD ALL), or closed if broken. */
  giveBack(): void {
    this.stopWatching();
    this.connection.release(this.brokenNoted ? { destroy: true } : { resetSession: true });
  }

  private noteBroken(): void {
    if (this.brokenNoted) return;
    this.brokenNoted = true;
    this.onBroken();
  }
}
