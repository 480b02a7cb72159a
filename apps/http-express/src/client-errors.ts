/**
 * Answers what Node's HTTP parser refuses (a malformed request line, a bad chunk, headers too
 * large, a request that took too long), an Expect other than 100-continue, alone or beside it
 * (417), and CONNECT (501)
 * in JSON like every other answer (docs/decisions.md 5), instead of Node's bare replies or none,
 * and closes the connection.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { routePathOf } from './contract';
import type { Logger } from 'pino';
import type { ServiceMetrics } from './observability/metrics';
import { answerHeader, closingAfterRest } from './answer-headers';
import { markRefusedByParser } from './cut-answers';
import { holdContinue } from './continue-on-read';
import { whenClosed } from './response-closed';
import { pathForLogs, requestIdOf } from './request-log';

const STATUS_BY_PARSER_CODE: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request headers too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request took too long'],
};

const REASON: Record<number, string> = {
  400: 'Bad Request',
  501: 'Not Implemented',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/**
 * One JSON answer on a socket Node's HTTP server no longer answers on, and the socket closed once
 * it is written: ending it alone would leave it half open for as long as the client keeps its end.
 */
function answerOnSocket(socket: Duplex, status: number, body: string, headers = ''): void {
  socket.end(
    `HTTP/1.1 ${status} ${REASON[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n${headers}Connection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

// On the socket rather than in a WeakMap keyed by sockets: the collector traces every WeakMap
// entry apart (README, Performance).
const ANSWERS = Symbol('sqlgate.answers');

type AnsweringSocket = Duplex & { [ANSWERS]?: ServerResponse[] };

/**
 * The answers of each socket not yet written whole, in order. Node writes a socket's answers one
 * after the other: the one it is writing, or will write next, is the one it gave the socket to
 * (`res.socket`); a pipelined answer waiting behind it has none yet.
 */
class AnswersBySocket {
  add(res: ServerResponse, socket: Duplex): void {
    const answering = socket as AnsweringSocket;
    const answers = answering[ANSWERS];
    if (answers === undefined) {
      answering[ANSWERS] = [res];
      return;
    }
    // Written in order: the answers written whole are the first ones.
    let written = 0;
    while (answers[written]?.writableFinished) written += 1;
    answers.splice(0, written);
    answers.push(res);
  }

  /** The answer before `res` on the socket, while it is not written whole. */
  before(socket: Duplex, res: ServerResponse): ServerResponse | undefined {
    const answers = (socket as AnsweringSocket)[ANSWERS] ?? [];
    const earlier = answers[answers.indexOf(res) - 1];
    return earlier && !earlier.writableFinished ? earlier : undefined;
  }

  /** The socket's last answer, while it is not written whole. */
  pending(socket: Duplex): ServerResponse | undefined {
    const last = (socket as AnsweringSocket)[ANSWERS]?.at(-1);
    return last && !last.writableFinished ? last : undefined;
  }

  /** The answer Node is writing on the socket, if any. */
  writing(socket: Duplex): ServerResponse | undefined {
    return (socket as AnsweringSocket)[ANSWERS]?.find((res) => res.socket === socket);
  }
}

/**
 * Each answer carries a request id, and `logger`, when given, gets a request line with it, as every
 * other answer's id has one (docs/interface.md); `metrics` counts it. A refusal of the parser has
 * no request to name: its line says why (`parserError`), and its id is always a new one.
 */
export function answerClientErrorsInJson(
  server: Server,
  logger?: Logger,
  metrics?: ServiceMetrics,
): void {
  const answers = new AnswersBySocket();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => answers.add(res, req.socket));
  const logged = (req: IncomingMessage, status: number): string => {
    const id = requestIdOf(req);
    const path = (req.url ?? '').split('?')[0] ?? '';
    // As the request log writes paths: no query string, a session id shortened.
    logger?.info({ reqId: id, method: req.method, path: pathForLogs(path), status }, 'request');
    metrics?.httpRefused(routePathOf(path) ?? 'unmatched', req.method, status);
    return id;
  };
  const refuseExpectation = (req: IncomingMessage, res: ServerResponse): void => {
    answers.add(res, req.socket);
    const body = JSON.stringify({
      error: `Expect '${String(req.headers.expect).slice(0, 100)}' is not supported`,
    });
    res.writeHead(417, {
      'X-Request-Id': logged(req, 417),
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      // The body the client holds back for the expectation will not be read.
      Connection: 'close',
    });
    res.end(body);
  };
  // An Expect other than 100-continue: Node's own answer is an empty 417.
  server.on('checkExpectation', refuseExpectation);
  // Node continues whenever 100-continue is among the expectations; one it does not meet besides
  // (`Expect: 100-continue, foo`, or two Expect lines) must be refused too (RFC 9110 10.1.1).
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const expectations = String(req.headers.expect).split(',');
    if (expectations.some((expectation) => expectation.trim().toLowerCase() !== '100-continue')) {
      refuseExpectation(req, res);
      return;
    }
    // Sent once a route reads the body (continue-on-read.ts), not before a refusal.
    holdContinue(req, res);
    server.emit('request', req, res);
  });
  // CONNECT asks for a tunnel; without a listener Node drops the socket without a word.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    answerOnSocket(
      socket,
      501,
      JSON.stringify({ error: 'CONNECT is not supported' }),
      `X-Request-Id: ${logged(req, 501)}\r\n`,
    );
  });
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => {
    // A request already answered, whose body the parser then refused (a refusal that came before
    // the body): a second answer on the connection would be read as the next request's. Nor is
    // what follows a body on a connection that closes once the body is read.
    if (
      !socket.writable ||
      answers.writing(socket)?.headersSent ||
      closingAfterRest(socket as Socket)
    ) {
      socket.destroy();
      return;
    }
    const [status, message] = STATUS_BY_PARSER_CODE[error.code ?? ''] ?? [
      400,
      'Malformed HTTP request',
    ];
    const refuse = (id: string): void =>
      answerOnSocket(socket, status, JSON.stringify({ error: message }), `X-Request-Id: ${id}\r\n`);
    const pending = answers.pending(socket);
    if (pending && !pending.req.complete) {
      // The refused bytes are this request's body: the refusal is its answer, logged and counted
      // with it, under its id; after the answers before it, when it waits behind them.
      markRefusedByParser(pending, status);
      const id = answerHeader(pending, 'X-Request-Id') ?? requestIdOf(pending.req);
      const earlier = answers.before(socket, pending);
      if (earlier) whenClosed(earlier, () => (socket.writable ? refuse(id) : socket.destroy()));
      else refuse(id);
      return;
    }
    const id = randomUUID();
    logger?.info({ reqId: id, status, parserError: error.code ?? error.message }, 'request');
    metrics?.httpRefused('unmatched', undefined, status);
    // Bytes that follow whole requests still being answered: their answers go first, in order
    // (RFC 9112 9.3), then the refusal; an answer that closed the connection was the last one.
    if (pending) {
      whenClosed(pending, () => (socket.writable ? refuse(id) : socket.destroy()));
      return;
    }
    refuse(id);
  });
}
