/** Plain HTTP requests with full control of the headers (Host, Origin), for the socket-level tests. */
import { request } from 'node:http';
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): unknown;
}

export interface RawRequest {
  port: number;
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  /** The address the connection comes from (any of 127.0.0.0/8 reaches a server on 127.0.0.1). */
  localAddress?: string;
}

/** Sends one request on its own connection and reads the whole answer. */
export function rawRequest(options: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: '127.0.0.1',
        port: options.port,
        method: options.method ?? 'GET',
        path: options.path ?? '/',
        headers: { connection: 'close', ...options.headers },
        agent: false,
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (incoming) => {
        let text = '';
        incoming.setEncoding('utf8');
        incoming.on('data', (chunk: string) => (text += chunk));
        incoming.on('end', () =>
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            text,
            json: () => JSON.parse(text) as unknown,
          }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

/** Sends raw bytes on a new connection and returns everything the server answered before closing. */
export function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => resolve(received));
    // A server that answers before reading all it was sent may reset the connection after its
    // answer: what arrived before the reset is the answer.
    socket.on('error', (error) => (received === '' ? reject(error) : resolve(received)));
    socket.setTimeout(5000, () => socket.destroy());
  });
}
