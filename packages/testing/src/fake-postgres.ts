/**
 * A fake PostgreSQL server for fault tests: it logs any client in (no password asked, TLS
 * refused with 'N'), then answers every round trip with what a behaviour function chooses: by
 * default the well-formed answer, or a seeded mutation of it (see `mutatingBehaviour`). It never
 * crashes itself, keeps its memory bounded and closes every socket on close().
 */
import { createServer, type Server, type Socket } from 'node:net';
import {
  chooseMutation,
  createRandom,
  EVEN_WEIGHTS,
  mutateAnswer,
  replyWith,
  seedFrom,
  type MutationWeights,
  type Random,
  type Reply,
} from './fake-postgres-mutations';
import {
  cstringsOf,
  FakeSession,
  FrontendReader,
  loginAnswer,
  type BackendMessage,
  type FrontendMessage,
} from './fake-postgres-protocol';

/** One round trip of a client: its messages up to Sync, Flush or a simple Query. */
export interface RoundTrip {
  /** Which connection, 1-based in the order the server accepted them. */
  connection: number;
  /** 0-based position of this round trip on its connection. */
  index: number;
  requests: readonly FrontendMessage[];
  /** The SQL texts of its Parse and Query messages. */
  texts: readonly string[];
  /** What a real server would answer (the fake's idea of it). */
  answer: readonly BackendMessage[];
  /**
   * Seeded from the server's seed, the texts, and how often those texts were seen before: a
   * round trip whose texts are unique gets the same random choices however requests interleave.
   */
  random: Random;
}

/** The startup of one connection. */
export interface Login {
  connection: number;
  parameters: Readonly<Record<string, string>>;
  /** AuthenticationOk, ParameterStatus..., BackendKeyData, ReadyForQuery. */
  answer: readonly BackendMessage[];
  random: Random;
}

/** Chooses the reply to a round trip. */
export type Behaviour = (trip: RoundTrip) => Reply;

/** Chooses the reply to a startup message. */
export type LoginBehaviour = (login: Login) => Reply;

/** Options of {@link startFakePostgres}. */
export interface FakePostgresOptions {
  /** Answers each round trip; default {@link wellFormed}. */
  behaviour?: Behaviour;
  /** Answers each startup message; default the well-formed login. */
  login?: LoginBehaviour;
  /** Seeds the `random` handed to the behaviours; default 1. */
  seed?: number;
  /** Receives a line when a behaviour throws or a client sends something unreadable. */
  log?: (line: string) => void;
}

/** A running fake server. */
export interface FakePostgres {
  host: string;
  port: number;
  /** Query connections accepted so far (TLS probes and cancel requests not counted). */
  readonly connections: number;
  /** CancelRequests received. */
  readonly cancelRequests: number;
  /** Round trips answered (or deliberately left unanswered). */
  readonly roundTrips: number;
  /** Sockets open now. */
  readonly openSockets: number;
  /** Stops listening and destroys every socket; idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The well-formed answer, always. */
export const wellFormed: Behaviour = (trip) => replyWith(trip.answer);

/** Options of {@link mutatingBehaviour}. */
export interface MutatingBehaviourOptions {
  /** Share of round trips that get a mutation, 0..1; default 0.5. */
  rate?: number;
  /** Relative weights of the mutations; default every mutation equally. */
  weights?: MutationWeights;
  /** Whether a round trip may be mutated (others get the well-formed answer); default all. */
  applies?: (trip: RoundTrip) => boolean;
}

/** A behaviour that mutates a seeded share of the answers and answers the rest well. */
export function mutatingBehaviour(options: MutatingBehaviourOptions = {}): Behaviour {
  const rate = options.rate ?? 0.5;
  const weights = options.weights ?? EVEN_WEIGHTS;
  return (trip) => {
    if (options.applies && !options.applies(trip)) return replyWith(trip.answer);
    if (!trip.random.chance(rate)) return replyWith(trip.answer);
    return mutateAnswer(chooseMutation(weights, trip.random), trip.answer, trip.random);
  };
}

const HOST = '127.0.0.1';

/**
 * Starts a fake PostgreSQL on 127.0.0.1 and a port the kernel picks. It answers an SSLRequest
 * with 'N', a startup message with the login (by default AuthenticationOk, server_version 15.0
 * and the other usual ParameterStatus, BackendKeyData, ReadyForQuery 'I'), and every round trip
 * with what `behaviour` returns. CancelRequests are counted and their connections closed.
 */
export async function startFakePostgres(options: FakePostgresOptions = {}): Promise<FakePostgres> {
  const state = new FakeServerState(options);
  const server = createServer({ allowHalfOpen: false }, (socket) => state.accept(socket));
  server.on('error', (error) => state.log(`server error: ${error.message}`));
  // Port 0: the kernel picks a free port at bind time, so no other process can take it first.
  const port = await listen(server);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      state.destroyAll();
    }));
  return {
    host: HOST,
    port,
    get connections() {
      return state.connections;
    },
    get cancelRequests() {
      return state.cancelRequests;
    },
    get roundTrips() {
      return state.roundTrips;
    },
    get openSockets() {
      return state.sockets.size;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen({ host: HOST, port: 0, exclusive: true }, () => {
      server.off('error', onError);
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error(`could not read the port bound on ${HOST}`));
        return;
      }
      resolve(address.port);
    });
  });
}

class FakeServerState {
  readonly sockets = new Set<Socket>();
  connections = 0;
  cancelRequests = 0;
  roundTrips = 0;
  private readonly seed: number;
  private readonly behaviour: Behaviour;
  private readonly loginBehaviour: LoginBehaviour;
  private readonly seen = new Map<string, number>();
  private closed = false;
  readonly log: (line: string) => void;

  constructor(options: FakePostgresOptions) {
    this.seed = options.seed ?? 1;
    this.behaviour = options.behaviour ?? wellFormed;
    this.loginBehaviour = options.login ?? ((login) => replyWith(login.answer));
    this.log = options.log ?? (() => undefined);
  }

  accept(socket: Socket): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    socket.setNoDelay(true);
    socket.on('error', () => undefined);
    socket.on('close', () => this.sockets.delete(socket));
    new FakeConnection(socket, this).start();
  }

  destroyAll(): void {
    this.closed = true;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  /** A connection's login reply; a throwing behaviour costs that connection only. */
  login(connection: number, parameters: Record<string, string>): Reply {
    const login: Login = {
      connection,
      parameters,
      answer: loginAnswer(connection, seedFrom(this.seed, 'secret', connection) & 0x7fffffff),
      random: createRandom(seedFrom(this.seed, 'login', connection)),
    };
    return this.safely(() => this.loginBehaviour(login));
  }

  roundTrip(trip: Omit<RoundTrip, 'random'>): Reply {
    this.roundTrips++;
    const key = trip.texts.join('\u0002');
    const occurrence = this.seen.get(key) ?? 0;
    // Bounded: only the distinct texts of a test run are remembered, and not without limit.
    if (this.seen.size < 100_000 || this.seen.has(key)) this.seen.set(key, occurrence + 1);
    const random = createRandom(seedFrom(this.seed, key, occurrence));
    return this.safely(() => this.behaviour({ ...trip, random }));
  }

  private safely(choose: () => Reply): Reply {
    try {
      return choose();
    } catch (error) {
      this.log(`behaviour threw: ${error instanceof Error ? error.message : String(error)}`);
      return { chunks: [], then: 'destroy', label: 'behaviour threw' };
    }
  }
}

/** One client connection: reads its messages, asks for replies, writes them. */
class FakeConnection {
  private readonly reader = new FrontendReader();
  private readonly session = new FakeSession();
  private pending: FrontendMessage[] = [];
  private number = 0;
  private trips = 0;
  private ignoring = false;

  constructor(
    private readonly socket: Socket,
    private readonly server: FakeServerState,
  ) {}

  start(): void {
    this.socket.on('data', (chunk: Buffer) => {
      if (this.ignoring) return; // hung: the bytes are dropped, nothing piles up
      try {
        this.reader.push(chunk);
        this.drain();
      } catch (error) {
        this.server.log(`connection failed: ${error instanceof Error ? error.message : error}`);
        this.socket.destroy();
      }
    });
  }

  private drain(): void {
    for (let message = this.reader.next(); message; message = this.reader.next()) {
      if (!this.handle(message)) return;
    }
    if (this.reader.broken) {
      this.server.log(`unreadable client stream: ${this.reader.broken}`);
      this.socket.destroy();
    }
  }

  /** False once the connection stops being served. */
  private handle(message: FrontendMessage): boolean {
    switch (message.type) {
      case 'ssl-request':
      case 'gssenc-request':
        this.socket.write('N');
        return true;
      case 'cancel':
        this.server.cancelRequests++;
        return this.send({ chunks: [], then: 'end' });
      case 'startup':
        this.number = ++this.server.connections;
        return this.send(
          this.server.login(
            this.number,
            (message as { parameters: Record<string, string> }).parameters,
          ),
        );
      case 'X':
        return this.send({ chunks: [], then: 'end' });
      case 'p':
        // A password after a login behaviour asked for one: let the client in.
        if (this.trips === 0) return this.send(replyWith(loginAnswer(this.number, this.number)));
        return true; // a password out of turn (after an unexpected auth request) is ignored
      default:
        break;
    }
    this.pending.push(message);
    if (message.type !== 'S' && message.type !== 'Q' && message.type !== 'H') return true;
    const requests = this.pending;
    this.pending = [];
    const texts = requests.flatMap((request) => {
      if (!('body' in request)) return [];
      if (request.type === 'Q') return cstringsOf(request.body, 1).strings;
      if (request.type === 'P') return cstringsOf(request.body, 2).strings.slice(1);
      return [];
    });
    const answer = this.session.answer(requests);
    const reply = this.server.roundTrip({
      connection: this.number,
      index: this.trips++,
      requests,
      texts,
      answer,
    });
    return this.send(reply);
  }

  private send(reply: Reply): boolean {
    for (const chunk of reply.chunks) if (chunk.length > 0) this.socket.write(chunk);
    const then = reply.then ?? 'serve';
    if (then === 'serve') return true;
    // Whatever the client sends from now on is dropped unread: nothing piles up.
    this.ignoring = true;
    if (then === 'end') this.socket.end();
    // Let the bytes go out first, then reset.
    if (then === 'destroy') this.socket.write(Buffer.alloc(0), () => this.socket.resetAndDestroy());
    return false;
  }
}
