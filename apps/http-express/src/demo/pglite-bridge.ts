/**
 * A PostgreSQL server on a TCP port in front of PGlite, which is one backend that takes protocol
 * messages through a function call (docs/decisions.md 10.47). Each connection's messages go to
 * that backend as they come, and a connection keeps the backend from its first message until the
 * backend is idle again (ReadyForQuery 'I'): a transaction, or a Parse ... Sync sequence, is never
 * interleaved with another connection's messages. Two things the backend cannot do are handled
 * here: COPY ... FROM STDIN, whose data PGlite must receive in the same call as the statement (the
 * data is gathered first), and a connection that ends (its transaction is rolled back, and when no
 * other connection is open the session is reset, as a new backend would start).
 */
import { createServer, type Server, type Socket } from 'node:net';
import {
  CANCEL_REQUEST,
  COPY_IN_RESPONSE,
  copyFail,
  errorThenReady,
  fatalError,
  GSSENC_REQUEST,
  PROTOCOL_3,
  queryText,
  readyStatusAtEnd,
  simpleQuery,
  SSL_REQUEST,
  SYNC,
  takeStartupMessage,
  takeTaggedMessages,
  withoutFirst,
  type TaggedMessage,
} from './wire';

export interface BackendAccess {
  /** Hands protocol messages to the backend; resolves with its whole answer. */
  run(messages: Uint8Array): Promise<Uint8Array>;
  /** Where a simple Query's text has a COPY ... FROM STDIN: nowhere, as its only statement, or among others. */
  copyFromStdinIn(sql: string): 'none' | 'alone' | 'among-others';
}

/** COPY data one statement may gather in memory before it is handed to the backend. */
const MAX_COPY_IN_BYTES = 256 * 1024 * 1024;

/** Whose turn it is on the one backend; connections wait for theirs in order. */
class BackendTurns {
  private holder: BridgedConnection | undefined;
  private readonly waiting: (() => void)[] = [];

  async take(connection: BridgedConnection): Promise<void> {
    while (this.holder !== undefined && this.holder !== connection) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.holder = connection;
  }

  give(connection: BridgedConnection): void {
    if (this.holder !== connection) return;
    this.holder = undefined;
    this.waiting.splice(0).forEach((wake) => wake());
  }
}

interface CopyInProgress {
  parts: Buffer[];
  bytes: number;
}

class BridgedConnection {
  private input: Buffer = Buffer.alloc(0);
  private started = false;
  private copy: CopyInProgress | undefined;
  /** Each step waits for the one before: a connection's messages are handled in order. */
  private work: Promise<void> = Promise.resolve();

  constructor(
    private readonly socket: Socket,
    private readonly bridge: PgliteBridge,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.input = this.input.length === 0 ? chunk : Buffer.concat([this.input, chunk]);
      this.then(() => this.handleInput());
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      this.bridge.closed(this);
      this.then(() => this.bridge.ended(this));
    });
  }

  private then(step: () => Promise<void>): void {
    this.work = this.work.then(step).catch(() => {
      this.socket.destroy();
    });
  }

  private async handleInput(): Promise<void> {
    if (this.socket.destroyed) return;
    if (!this.started && !(await this.handleStartup())) return;
    const { messages, used } = takeTaggedMessages(this.input);
    this.input = this.input.subarray(used);
    let pending: TaggedMessage[] = [];
    for (const message of messages) {
      if (this.copy) {
        await this.continueCopy(message);
        continue;
      }
      if (message.tag === 'X') break;
      const where =
        message.tag === 'Q' ? this.bridge.access.copyFromStdinIn(queryText(message)) : 'none';
      if (where === 'none') {
        pending.push(message);
        continue;
      }
      await this.send(pending);
      pending = [];
      if (where === 'alone') this.startCopy(message);
      else {
        this.socket.write(
          errorThenReady(
            '0A000',
            'the embedded database takes COPY ... FROM STDIN only as a statement of its own',
          ),
        );
      }
    }
    await this.send(pending);
    if (messages.some((message) => message.tag === 'X')) this.socket.end();
  }

  /** Answers the requests that come before the startup message; true once it has gone through. */
  private async handleStartup(): Promise<boolean> {
    for (;;) {
      const startup = takeStartupMessage(this.input);
      if (startup === undefined) return false;
      this.input = this.input.subarray(startup.bytes.length);
      if (startup.code === SSL_REQUEST || startup.code === GSSENC_REQUEST) {
        this.socket.write('N');
      } else if (startup.code === CANCEL_REQUEST) {
        // PGlite runs a statement to its end: there is nothing a cancel could stop.
        this.socket.end();
        return false;
      } else if (startup.code === PROTOCOL_3) {
        if (this.bridge.runsForAnEndedConnection()) {
          // Waiting for the turn would outlast any login timeout; too many connections (53300)
          // says "not now, try again" to every client (docs/decisions.md 10.47).
          this.socket.end(
            fatalError(
              '53300',
              'the embedded database is still running a statement whose request has ended (it runs every statement to its end); try again once it has finished',
            ),
          );
          return false;
        }
        await this.send([{ tag: '', bytes: startup.bytes }]);
        this.started = true;
        return true;
      } else {
        this.socket.destroy();
        return false;
      }
    }
  }

  /** Hands messages to the backend in this connection's turn, which ends once the backend is idle. */
  private async send(messages: readonly TaggedMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const answer = await this.bridge.runInTurn(
      this,
      Buffer.concat(messages.map(({ bytes }) => bytes)),
    );
    this.write(answer);
  }

  /** The client sends its COPY data once it has a CopyInResponse: it gets one before the backend sees the statement. */
  private startCopy(query: TaggedMessage): void {
    this.copy = { parts: [query.bytes], bytes: 0 };
    this.socket.write(COPY_IN_RESPONSE);
  }

  private async continueCopy(message: TaggedMessage): Promise<void> {
    const copy = this.copy as CopyInProgress;
    if (message.tag === 'd') {
      copy.bytes += message.bytes.length;
      if (copy.bytes <= MAX_COPY_IN_BYTES) copy.parts.push(message.bytes);
      return;
    }
    this.copy = undefined;
    const ended =
      copy.bytes > MAX_COPY_IN_BYTES
        ? copyFail(
            `the embedded database takes at most ${MAX_COPY_IN_BYTES} bytes of COPY data in one statement`,
          )
        : message.tag === 'c' || message.tag === 'f'
          ? message.bytes
          : copyFail(`a message of type '${message.tag}' came before the end of the COPY data`);
    const answer = await this.bridge.runInTurn(this, Buffer.concat([...copy.parts, ended]));
    // The client already had its CopyInResponse.
    this.write(withoutFirst(answer, 'G'));
  }

  destroy(): void {
    this.socket.destroy();
  }

  private write(answer: Uint8Array): void {
    if (answer.length > 0 && this.socket.writable) this.socket.write(answer);
  }
}

export class PgliteBridge {
  private readonly turns = new BackendTurns();
  private readonly open = new Set<BridgedConnection>();
  /** Whose messages the backend is running now. */
  private running: BridgedConnection | undefined;
  private readonly server: Server;

  constructor(readonly access: BackendAccess) {
    this.server = createServer((socket) => this.open.add(new BridgedConnection(socket, this)));
  }

  /** Listens on 127.0.0.1 and a port the kernel picks; resolves with that port. */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        const address = this.server.address();
        resolve(typeof address === 'object' && address !== null ? address.port : 0);
      });
    });
  }

  /** Stops listening and ends every connection. */
  close(): Promise<void> {
    for (const connection of this.open) connection.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** A connection's socket closed: what it sent may still run (see ended). */
  closed(connection: BridgedConnection): void {
    this.open.delete(connection);
  }

  /** The backend still runs what a connection that has since closed sent it. */
  runsForAnEndedConnection(): boolean {
    return this.running !== undefined && !this.open.has(this.running);
  }

  async runInTurn(connection: BridgedConnection, messages: Uint8Array): Promise<Uint8Array> {
    await this.turns.take(connection);
    let answer: Uint8Array;
    this.running = connection;
    try {
      answer = await this.access.run(messages);
    } catch (error) {
      this.turns.give(connection);
      throw error;
    } finally {
      this.running = undefined;
    }
    if (readyStatusAtEnd(answer) === 'I') this.turns.give(connection);
    return answer;
  }

  /**
   * A connection ended: what it left open on the backend is ended too (an unfinished Parse ... Sync
   * sequence, a transaction), and when it was the last one open, the session it leaves (prepared
   * statements, settings, temporary tables) is discarded, so the next connection starts as on a
   * backend of its own.
   */
  async ended(connection: BridgedConnection): Promise<void> {
    await this.turns.take(connection);
    try {
      if (readyStatusAtEnd(await this.access.run(SYNC)) !== 'I') {
        await this.access.run(simpleQuery('ROLLBACK'));
      }
      if (this.open.size === 0) await this.access.run(simpleQuery('DISCARD ALL'));
    } finally {
      this.turns.give(connection);
    }
  }
}
