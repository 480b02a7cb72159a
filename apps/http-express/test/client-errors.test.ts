/** What Node's HTTP parser refuses is answered in JSON too (docs/decisions.md 5). */
import { connect } from 'node:net';
import { startServer, type RunningServer } from '../src/server';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
});
afterAll(() => server.close());

/** Sends raw bytes and returns everything the server answered before closing. */
function raw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1', () => socket.write(bytes));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy());
  });
}

it.each([
  ['a malformed request line', 'NOT HTTP AT ALL\r\n\r\n', 400],
  [
    'a bad chunk',
    'POST /api/query HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    400,
  ],
  [
    'headers over the limit',
    `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    431,
  ],
])('answers %s with JSON and closes', async (_what, bytes, status) => {
  const answer = await raw(bytes);
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  expect(head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  expect(head).toMatch(/Content-Type: application\/json/i);
  expect(JSON.parse(body)).toEqual({ error: expect.any(String) });
});
