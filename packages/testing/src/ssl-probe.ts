import { connect } from 'node:net';

/** The protocol's SSLRequest code (1234 << 16 | 5679). */
const SSL_REQUEST_CODE = 80877103;

/**
 * Asks a PostgreSQL server whether it accepts TLS, the way every client starts a TLS connection:
 * an SSLRequest packet answered by one byte, 'S' (yes) or 'N' (no). Nothing is authenticated.
 * Rejects when the server cannot be reached within `timeoutMs`.
 */
export function serverAcceptsSsl(host: string, port: number, timeoutMs = 5_000): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const finish = (outcome: () => void) => {
      socket.destroy();
      outcome();
    };
    socket.setTimeout(timeoutMs, () =>
      finish(() => reject(new Error(`no answer from ${host}:${port} within ${timeoutMs} ms`))),
    );
    socket.once('error', (error) =>
      finish(() => reject(new Error(`cannot reach ${host}:${port}: ${error.message}`))),
    );
    socket.once('connect', () => {
      const request = Buffer.alloc(8);
      request.writeInt32BE(8, 0);
      request.writeInt32BE(SSL_REQUEST_CODE, 4);
      socket.write(request);
    });
    socket.once('data', (answer) => finish(() => resolve(answer[0] === 'S'.charCodeAt(0))));
    socket.once('end', () =>
      finish(() => reject(new Error(`${host}:${port} closed the connection without answering`))),
    );
  });
}
