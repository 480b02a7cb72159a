/**
 * The socket pg talks to a server through (pg's `stream` option), opened by sqlgate so that:
 * - TLS is negotiated per connection attempt (docs/decisions.md 7, 10.18); pg is told `ssl: false`.
 * - Every byte is read by MessageFraming inside a guard: a malformed message ends the connection
 *   with a PROTOCOL_ERROR, never an uncaught exception (docs/decisions.md 10.1).
 * - It knows when the server last sent anything (docs/decisions.md 10.6) and keeps its facts.
 * - It owns the login's edges without patching pg (docs/decisions.md 10.1): the StartupMessage,
 *   the connect timeout (ETIMEDOUT), a close during the login (ECONNRESET).
 * pg drives it like a net.Socket; test/server-socket.test.ts pins that surface.
 */
import { EventEmitter } from 'node:events';
import { connect as connectTcp, isIP, type Socket } from 'node:net';
import { connect as connectTls, type ConnectionOptions, type TLSSocket } from 'node:tls';
import type { SslMode } from '@sqlgate/core';
import { DatabaseError } from 'pg-protocol';
import {
  MessageFraming,
  ProtocolViolation,
  type FramingLimits,
  type RoundTripReader,
} from './message-framing';
import { ResultTooLarge } from './message-framing-errors';
import { sqlgateStartup } from './startup-message';

/** The SSLRequest packet: length 8, code 80877103. */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);

/** What `require`, `prefer` and `verify-full` need to open TLS. */
export interface ServerSocketOptions {
  sslMode: SslMode;
  /** Options for tls.connect (verification, CA); absent for `disable`. */
  tls: ConnectionOptions | false;
  limits: FramingLimits;
  /** The name TLS verifies and sends as SNI when connecting to a resolved address. */
  serverName?: string;
  /** The application_name of the StartupMessage, the only parameter added to user and database. */
  applicationName: string;
  /** The login (connecting, TLS, authentication) gives up after this long: ETIMEDOUT. */
  connectTimeoutMs: number;
}

/** A connection that ended under a round trip; no code: the mapping reads the socket's state. */
export function lostConnection(): Error {
  return new Error('Connection terminated unexpectedly');
}

/** An error with the code the domain mapping reads. */
function codedError(message: string, code: string): Error & { code: string } {
  return Object.assign(new Error(message), { code });
}

export class ServerSocket extends EventEmitter {
  readonly framing: MessageFraming;
  /** performance.now() of the last bytes received. */
  lastReceivedAt = 0;
  /** Reading waits for a slow consumer of streamed rows: the server's silence is not its own. */
  readingPaused = false;
  /** Milliseconds reading has waited for consumers, in total (deadlines leave them out). */
  pausedMs = 0;
  /** Ends the current pause, if any. */
  private resumeNow: (() => void) | undefined;
  /** The connection runs over TLS. */
  encrypted = false;
  /** Why the connection was ended by sqlgate, when it was (a protocol fault, a deadline). */
  fault: (Error & { code: string }) | null = null;
  host = '';
  port = 0;

  private socket: Socket | TLSSocket | null = null;
  private noDelay = true;
  private keepAlive: { enable: boolean; delay: number } | null = null;
  private referenced = true;
  private closed = false;
  /** The next write is pg's StartupMessage (docs/decisions.md 10.1). */
  private startupPending = true;
  /** Ends a login that takes longer than connectTimeoutMs. */
  private loginDeadline: NodeJS.Timeout | undefined;
  /** end() or destroy() was asked for, or an error was reported: a close is no surprise. */
  private closeExpected = false;
  /** The login's bytes, for pg's parser (message-framing.ts). */
  private readonly toPg = (bytes: Buffer): void => {
    this.emit('data', bytes);
  };

  constructor(private readonly options: ServerSocketOptions) {
    super();
    this.framing = new MessageFraming(options.limits);
    // LISTEN's notifications, as an event of the socket (the probe of 10.32 listens).
    this.framing.onNotification = (notification) => this.emit('notification', notification);
  }

  get writable(): boolean {
    return !this.closed && this.socket !== null && this.socket.writable;
  }

  /** The socket is gone (closed by either side, or never opened). */
  get ended(): boolean {
    return this.closed || this.fault !== null || (this.socket?.destroyed ?? false);
  }

  connect(port: number, host: string): this {
    this.host = host;
    this.port = port;
    this.loginDeadline = setTimeout(() => {
      this.abort(codedError('timeout expired', 'ETIMEDOUT'));
    }, this.options.connectTimeoutMs);
    this.loginDeadline.unref();
    const raw = connectTcp({ port, host });
    this.socket = raw;
    this.applySocketSettings(raw);
    raw.on('error', (error) => this.onSocketError(raw, error));
    raw.on('close', () => this.onSocketClose(raw));
    raw.once('connect', () => {
      if (this.options.sslMode === 'disable' || this.options.tls === false) this.ready(raw);
      else this.negotiateTls(raw, host);
    });
    return this;
  }

  setNoDelay(noDelay = true): this {
    this.noDelay = noDelay;
    this.socket?.setNoDelay(noDelay);
    return this;
  }

  setKeepAlive(enable = false, delay = 0): this {
    this.keepAlive = { enable, delay };
    this.socket?.setKeepAlive(enable, delay);
    return this;
  }

  ref(): this {
    this.referenced = true;
    this.socket?.ref();
    return this;
  }

  unref(): this {
    this.referenced = false;
    this.socket?.unref();
    return this;
  }

  /** Stops reading until `until` settles: backpressure for streamed rows. */
  pauseReading(until: Promise<unknown>): void {
    if (this.readingPaused || !this.socket) return;
    const socket = this.socket;
    const since = performance.now();
    this.readingPaused = true;
    socket.pause();
    const resume = (): void => {
      if (this.resumeNow !== resume) return; // this pause already ended
      this.resumeNow = undefined;
      const now = performance.now();
      this.pausedMs += now - since;
      this.lastReceivedAt = now;
      this.readingPaused = false;
      if (!socket.destroyed) socket.resume();
    };
    this.resumeNow = resume;
    until.then(resume, resume);
  }

  /** Ends a pause at once: the round trip is over, and the next user must read freely. */
  resumeReading(): void {
    this.resumeNow?.();
  }

  /** Resolves once the socket's write buffer has drained, or the socket is gone. */
  drainedForWriting(): Promise<void> {
    const socket = this.socket;
    if (!socket || socket.destroyed || !socket.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        socket.off('drain', done);
        socket.off('close', done);
        resolve();
      };
      socket.on('drain', done);
      socket.on('close', done);
    });
  }

  write(data: Buffer | string, callback?: (error?: Error | null) => void): boolean {
    if (!this.socket || this.closed) {
      if (callback) process.nextTick(callback, new Error('The connection is closed'));
      return false;
    }
    if (this.startupPending && typeof data !== 'string') {
      this.startupPending = false;
      data = sqlgateStartup(data, this.options.applicationName);
    }
    return callback ? this.socket.write(data, callback) : this.socket.write(data);
  }

  /** Makes `reader` the reader of the next answer, until ReadyForQuery; fails at once when ended. */
  startRoundTrip(reader: RoundTripReader): void {
    if (this.framing.reader !== null) throw new Error('A round trip is already being read');
    if (this.ended) {
      reader.connectionLost(this.fault ?? lostConnection());
      return;
    }
    this.framing.reader = reader;
  }

  end(): this {
    this.closeExpected = true;
    if (this.socket) this.socket.end();
    else this.finish();
    return this;
  }

  destroy(error?: Error): this {
    this.closeExpected = true;
    if (this.socket) this.socket.destroy(error);
    else this.finish(error);
    return this;
  }

  /** Ends the connection because of `error`: pg sees it as the connection's error. */
  abort(error: Error & { code: string }): void {
    if (this.fault || this.closed) return;
    this.fault = error;
    this.socket?.destroy();
    this.framing.connectionLost(error);
    this.emitError(error);
  }

  private applySocketSettings(socket: Socket): void {
    socket.setNoDelay(this.noDelay);
    if (this.keepAlive) socket.setKeepAlive(this.keepAlive.enable, this.keepAlive.delay);
    if (!this.referenced) socket.unref();
  }

  /** Sends SSLRequest and reads the one-byte answer before pg sees anything. */
  private negotiateTls(raw: Socket, host: string): void {
    raw.write(SSL_REQUEST);
    raw.once('data', (answer: Buffer) => {
      // More than one byte would be unencrypted data injected ahead of the handshake.
      if (answer.length !== 1) {
        this.abort(
          new ProtocolViolation('The server answered the SSL request with more than one byte'),
        );
        return;
      }
      const code = String.fromCharCode(answer[0] as number);
      if (code === 'S') {
        this.upgrade(raw, host);
      } else if (code === 'N' && this.options.sslMode === 'prefer') {
        this.ready(raw); // libpq's `prefer`: this server has no TLS, so this connection is plain
      } else if (code === 'N') {
        raw.destroy();
        this.emitError(
          codedError('The server does not support SSL connections', 'SSL_NOT_SUPPORTED'),
        );
      } else {
        raw.destroy();
        this.emitError(new ProtocolViolation(`The server answered the SSL request with '${code}'`));
      }
    });
  }

  private upgrade(raw: Socket, host: string): void {
    const name = this.options.serverName ?? host;
    const options: ConnectionOptions = {
      ...(this.options.tls || {}),
      socket: raw,
      host: name,
      // SNI must not be an IP address (RFC 6066 section 3).
      ...(isIP(name) === 0 ? { servername: name } : {}),
    };
    let secure: TLSSocket;
    try {
      secure = connectTls(options);
    } catch (error) {
      raw.destroy();
      this.emitError(error as Error);
      return;
    }
    this.socket = secure;
    secure.on('error', (error) => this.onSocketError(secure, error));
    secure.on('close', () => this.onSocketClose(secure));
    secure.once('secureConnect', () => {
      this.encrypted = true;
      this.ready(secure);
    });
  }

  /** The channel is set up: pg may send its StartupMessage. */
  private ready(socket: Socket | TLSSocket): void {
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('end', () => this.emit('end'));
    this.emit('connect');
  }

  private receive(chunk: Buffer): void {
    if (this.fault) return;
    this.lastReceivedAt = performance.now();
    try {
      this.framing.scan(chunk, this.toPg);
    } catch (error) {
      this.abort(asProtocolFault(error));
    }
    if (this.framing.facts.transactionStatus !== null) clearTimeout(this.loginDeadline);
  }

  private onSocketError(from: Socket | TLSSocket, error: Error): void {
    // Errors of the plain socket under a TLS one reach us through the TLS socket.
    if (from !== this.socket) return;
    if (this.fault) return;
    this.framing.connectionLost(error);
    this.emitError(error);
  }

  private onSocketClose(from: Socket | TLSSocket): void {
    if (from !== this.socket) return;
    this.finish();
  }

  private finish(error?: Error): void {
    if (this.closed) return;
    clearTimeout(this.loginDeadline);
    if (error) this.emitError(error);
    else if (!this.closeExpected && this.framing.facts.transactionStatus === null) {
      // The server closed the connection during the login: said with a code, before pg's own
      // error for it, which carries none.
      this.emitError(codedError('Connection terminated unexpectedly', 'ECONNRESET'));
    }
    this.closed = true;
    this.framing.connectionLost(error ?? lostConnection());
    this.emit('close');
  }

  private emitError(error: Error): void {
    this.closeExpected = true;
    // pg listens from connect() on; an error with no listener would end the process.
    if (this.listenerCount('error') > 0) this.emit('error', error);
  }
}

/** Anything thrown while handling a server's bytes: the connection cannot be trusted. */
function asProtocolFault(error: unknown): Error & { code: string } {
  if (error instanceof ProtocolViolation || error instanceof ResultTooLarge) return error;
  // An ErrorResponse between round trips: the server ends the connection, and says why.
  if (error instanceof DatabaseError && error.code !== undefined) {
    return error as DatabaseError & { code: string };
  }
  const detail = error instanceof Error ? error.message : String(error);
  const fault = new ProtocolViolation('The server sent a message that could not be read');
  // The detail stays on the error for the log; the message shown to callers is fixed.
  return Object.assign(fault, { cause: detail });
}
