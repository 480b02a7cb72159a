/**
 * Answers what Node's HTTP parser refuses (a malformed request line, a bad chunk, headers too
 * large, a request that took too long) in JSON like every other answer (docs/decisions.md 5),
 * instead of Node's bare replies, and closes the connection.
 */
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';

const STATUS_BY_PARSER_CODE: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request headers too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request took too long'],
};

const REASON: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

export function answerClientErrorsInJson(server: Server): void {
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const [status, message] = STATUS_BY_PARSER_CODE[error.code ?? ''] ?? [
      400,
      'Malformed HTTP request',
    ];
    const body = JSON.stringify({ error: message });
    socket.end(
      `HTTP/1.1 ${status} ${REASON[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
