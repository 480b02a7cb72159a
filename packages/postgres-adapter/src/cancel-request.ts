/**
 * PostgreSQL's CancelRequest: a new TCP connection carrying the backend's process id and secret key
 * asks the server to cancel whatever that backend is running. No authentication and no TLS needed.
 */
import { connect } from 'node:net';

const CANCEL_REQUEST_CODE = 80877102;

export function sendCancelRequest(
  host: string,
  port: number,
  processId: number,
  secretKey: number,
): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const finish = (): void => {
      socket.destroy();
      resolve();
    };
    socket.setTimeout(5000, finish);
    socket.once('error', finish);
    socket.once('close', finish);
    socket.once('connect', () => {
      const packet = Buffer.alloc(16);
      packet.writeInt32BE(16, 0);
      packet.writeInt32BE(CANCEL_REQUEST_CODE, 4);
      packet.writeInt32BE(processId, 8);
      packet.writeInt32BE(secretKey, 12);
      // The server closes the connection once it has read the request; closing our side first
      // is not done (nor by libpq): PgBouncer 1.18 then dropped the request, or ended itself
      // (FATAL "bad client state") with every connection it held.
      socket.write(packet);
    });
  });
}
