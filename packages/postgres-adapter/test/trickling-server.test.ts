/**
 * A server that keeps sending notices and never finishes a statement is given up too
 * (docs/decisions.md 10.6): silence is not the only sign of a server that will not answer.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { ConnectionError, orThrow } from '@sqlgate/core';
import { backend, encode, loginAnswer } from '@sqlgate/testing';
import { createPostgresConnections } from '../src';
import { fakeServerTarget, failureOf } from './support';

let server: Server;
const sockets = new Set<Socket>();

beforeAll(async () => {
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    let loggedIn = false;
    let timer: NodeJS.Timeout | undefined;
    socket.on('close', () => clearInterval(timer));
    socket.on('data', () => {
      if (!loggedIn) {
        loggedIn = true;
        socket.write(encode(loginAnswer(1, 2)));
        return;
      }
      // The query: a notice every 300 ms, and never an answer.
      timer ??= setInterval(
        () =>
          socket.write(
            encode([backend.noticeResponse({ S: 'NOTICE', C: '00000', M: 'still here' })]),
          ),
        300,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

it('gives up at about (steps - 1) × timeout + timeout + grace, and closes the connection', async () => {
  const connections = createPostgresConnections();
  try {
    const connection = await orThrow(
      connections.acquire(fakeServerTarget(server.address() as AddressInfo)),
    );
    const started = performance.now();
    const settled = await connection.run('SELECT pg_sleep(60)', {
      rowMode: 'object',
      maxRows: 10,
      silenceLimitMs: 1200,
      stepTimeLimitMs: 1000,
    });
    const failure = settled.ok ? undefined : settled.error;
    const tookMs = performance.now() - started;
    connection.release({ destroy: true });
    expect(failure).toBeInstanceOf(ConnectionError);
    expect(failure).toMatchObject({ code: 'SERVER_TIMEOUT', systemCode: 'ETIMEDOUT' });
    // The total limit ended it (the server never goes silent), not before it.
    expect((failure as Error).message).toMatch(/did not finish within/);
    expect(tookMs).toBeGreaterThanOrEqual(1100);
  } finally {
    await connections.close();
  }
});

it('ends a connection check against a server that goes silent after the login within the connect timeout', async () => {
  const connections = createPostgresConnections({ connectTimeoutMs: 800 });
  try {
    const started = performance.now();
    const failure = await failureOf(
      connections.check(fakeServerTarget(server.address() as AddressInfo)),
    );
    expect(failure).toMatchObject({ code: 'SERVER_TIMEOUT' });
    // The connect timeout, not the 5 s a connection's reset may stay silent: a wide margin for a
    // loaded machine that still tells the two apart.
    expect(performance.now() - started).toBeLessThan(4500);
  } finally {
    await connections.close();
  }
});
