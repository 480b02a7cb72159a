/**
 * How the standalone server stops (docs/decisions.md 9): it accepts nothing new, ends every session
 * at once (10.26), and gives the requests in flight GRACE_PERIOD_MS to finish. A request still
 * running then is cancelled, as a cancel by request id would do, and answers that it was (409
 * REQUEST_CANCELLED, with what ran and what became of its transaction); one that has not answered
 * CANCELLED_ANSWER_MS later has its connection closed. Both are logged with `cut: true`.
 */
import { once } from 'node:events';
import type { RequestListener, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { QueryService } from '@sqlgate/core';
import { giveUpAnswer, markCut } from './cut-answers';
import { disconnectSignalOf } from './disconnect-signal';

export const GRACE_PERIOD_MS = 10_000;
/**
 * Longer than the 5 s after which a connection whose server ignores a cancel is closed (10.7), so
 * that a request cancelled at the end of the grace period answers even then.
 */
export const CANCELLED_ANSWER_MS = 6_000;

/** Where a connection keeps the response to the request it serves now. */
const SERVING = Symbol('sqlgate.serving');

type ServingSocket = Socket & { [SERVING]?: ServerResponse };

/**
 * The requests each open connection serves. Connections, not requests, are kept in a set: a set
 * that outlives requests and points to each would cost every request (docs/decisions.md 10.29),
 * where a connection already points to the response it writes.
 */
export class InFlightRequests {
  private readonly sockets = new Set<Socket>();

  /** Keeps `server`'s connections from now on. */
  watch(server: Server): void {
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** The server's listener, noting on each connection the request it serves. */
  track(listener: RequestListener): RequestListener {
    return (req, res) => {
      (req.socket as ServingSocket)[SERVING] = res;
      listener(req, res);
    };
  }

  /** Cancels every request whose answer is not complete yet; each answers that it was. */
  cancelAll(): void {
    for (const res of this.responses()) {
      if (res.writableEnded) continue;
      markCut(res);
      disconnectSignalOf(res)?.cancel();
    }
  }

  /**
   * Closes the connection of every answer not yet sent whole; resolves once each has closed, and
   * so has been logged (its server may close before it does).
   */
  cutAll(): Promise<void> {
    const closing: Promise<unknown>[] = [];
    for (const res of this.responses()) {
      if (res.writableFinished) continue;
      closing.push(once(res, 'close'));
      giveUpAnswer(res);
    }
    return Promise.all(closing).then(() => undefined);
  }

  private *responses(): Iterable<ServerResponse> {
    for (const socket of this.sockets) {
      const res = (socket as ServingSocket)[SERVING];
      if (res !== undefined && !res.destroyed) yield res;
    }
  }
}

export async function shutDown(
  server: Server,
  service: QueryService,
  inFlight: InFlightRequests,
): Promise<void> {
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  // Sessions end at once (docs/decisions.md 10.26): a statement running in one is cancelled and
  // answered, their transactions rolled back. Other in-flight requests get the grace period.
  const sessionsClosed = service.closeSessions();
  // Keep-alive sockets become idle as their last response ends: close them as they do, so a
  // client's idle connection cannot hold the shutdown open.
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  let lastCall: NodeJS.Timeout | undefined;
  let cut: Promise<void> | undefined;
  const grace = setTimeout(() => {
    inFlight.cancelAll();
    lastCall = setTimeout(() => {
      cut = inFlight.cutAll();
      server.closeAllConnections();
    }, CANCELLED_ANSWER_MS);
    lastCall.unref();
  }, GRACE_PERIOD_MS);
  sweep.unref();
  grace.unref();
  await stopped;
  clearInterval(sweep);
  clearTimeout(grace);
  clearTimeout(lastCall);
  await cut;
  await sessionsClosed;
  await service.close();
}
