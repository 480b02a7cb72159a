/**
 * A session's connection as the execution strategies see it (docs/decisions.md 10.26): lent to
 * each request of the session in turn, but never given back to the pool by one. Only a connection
 * that broke (a lost socket, a FATAL error) is let go by a request: the session then ends.
 */
import type {
  Connection,
  ConnectionProvider,
  RunOptions,
  ServerSettings,
} from '../ports/connections';

export class PinnedConnection implements Connection {
  private brokenNoted = false;

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
      acquire: () => Promise.resolve({ ok: true, value: this }),
      serverSettings: () => this.serverSettings(),
    };
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
