/**
 * Resource bounds at the HTTP edge (docs/decisions.md 10.17): slow bodies are cut off with 408 after
 * BODY_TIMEOUT_MS, at most MAX_CONNECTIONS sockets are open, and ALLOWED_TARGETS is checked before
 * the SQL is parsed. Socket-level behaviour is checked against a real listening server.
 */
import { connect, type Socket } from 'node:net';
import request from 'supertest';
import { loadConfig } from '../src/config';
import { startServer, type RunningServer } from '../src/server';
import { createTestApp, target } from './support';

interface SocketOutcome {
  /** Everything the server sent. */
  received: string;
  /** Milliseconds from connecting to the server closing the socket. */
  closedAfterMs: number;
}

/** Opens a socket and resolves when the server has closed it, with what it sent. */
function openSocket(port: number): { socket: Socket; closed: Promise<SocketOutcome> } {
  const started = performance.now();
  const socket = connect({ host: '127.0.0.1', port });
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => undefined); // a reset after the server closed is expected
  const closed = new Promise<SocketOutcome>((resolve) =>
    socket.once('close', () => resolve({ received, closedAfterMs: performance.now() - started })),
  );
  return { socket, closed };
}

/**
 * A slow client: sends the headers of a POST with a 1,000-byte JSON body, then one byte of the body
 * every 100 ms, until the server closes the socket.
 */
function slowPost(port: number, path: string): Promise<SocketOutcome> {
  const { socket, closed } = openSocket(port);
  socket.once('connect', () => {
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
        'Content-Length: 1000\r\n\r\n{',
    );
    const dribble = setInterval(() => {
      if (socket.destroyed || !socket.writable) clearInterval(dribble);
      else socket.write(' ');
    }, 100);
    socket.once('close', () => clearInterval(dribble));
  });
  return closed;
}

describe('BODY_TIMEOUT_MS', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({
      port: 0,
      hostname: '127.0.0.1',
      logLevel: 'silent',
      bodyTimeoutMs: 500,
    });
  });
  afterAll(() => server.close());

  it.each(['/api/query', '/api/test-connection'])(
    'answers a body still dribbling in on %s with 408 JSON and closes the socket',
    async (path) => {
      const { received, closedAfterMs } = await slowPost(server.port, path);
      const [head = '', body] = received.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 408 /);
      expect(head).toMatch(/\r\nConnection: close/i);
      expect(head).toMatch(/\r\nContent-Type: application\/json/i);
      expect(JSON.parse(body ?? '')).toEqual({
        error: 'Request body not received within 500 ms',
      });
      expect(closedAfterMs).toBeGreaterThanOrEqual(450);
      expect(closedAfterMs).toBeLessThan(3000);
    },
  );

  it('still serves a body that arrives in time', async () => {
    const response = await fetch(`${server.url}/api/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(target({ sql: 'SELECT 1 AS one' })),
    });
    expect(response.status).toBe(200);
  });

  it('defaults to 10 s and 1000 connections, and refuses a malformed value', () => {
    expect(loadConfig({})).toMatchObject({ bodyTimeoutMs: 10_000, maxConnections: 1000 });
    expect(() => loadConfig({ BODY_TIMEOUT_MS: '0' })).toThrow(/^BODY_TIMEOUT_MS must be/);
    expect(() => loadConfig({ MAX_CONNECTIONS: 'many' })).toThrow(/^MAX_CONNECTIONS must be/);
  });
});

describe('MAX_CONNECTIONS', () => {
  it('refuses the 6th socket at once while 5 are held, and accepts again when one closes', async () => {
    const server = await startServer({
      port: 0,
      hostname: '127.0.0.1',
      logLevel: 'silent',
      maxConnections: 5,
    });
    const held: Socket[] = [];
    try {
      /** A kept-alive socket whose first request was answered: the server surely counts it. */
      const holdOne = async (): Promise<Socket> => {
        const { socket } = openSocket(server.port);
        await new Promise<void>((resolve, reject) => {
          socket.once('data', () => resolve());
          socket.once('close', () => reject(new Error('closed before answering')));
          socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n\r\n`);
        });
        return socket;
      };
      for (let index = 0; index < 5; index += 1) held.push(await holdOne());

      const sixth = openSocket(server.port);
      sixth.socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n\r\n`);
      const refused = await sixth.closed;
      expect(refused.received).toBe('');
      expect(refused.closedAfterMs).toBeLessThan(1000);

      held.pop()?.destroy();
      await new Promise((resolve) => setTimeout(resolve, 100));
      held.push(await holdOne());
    } finally {
      for (const socket of held) socket.destroy();
      await server.close();
    }
  });
});

describe('ALLOWED_TARGETS before parsing', () => {
  it('refuses a target before the SQL is parsed: 403 even for SQL that would be a 400', async () => {
    const testApp = createTestApp({ allowedTargets: '10.0.0.0/8' });
    try {
      await request(testApp.app)
        .post('/api/query')
        .send(target({ host: '127.0.0.1', sql: ';;' }))
        .expect(403, { error: 'Target not allowed' });
    } finally {
      await testApp.close();
    }
  });
});
