/**
 * Resource bounds at the HTTP edge (docs/decisions.md 10.17): slow bodies are cut off with 408 after
 * BODY_TIMEOUT_MS, at most MAX_CONNECTIONS sockets are open, and ALLOWED_TARGETS is checked before
 * the SQL is parsed. Socket-level behaviour is checked against a real listening server.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { eventually } from '@sqlgate/testing';
import request from 'supertest';
import { loadConfig } from '../src/config';
import { startServer, type RunningServer } from '../src/server';
import { captureLogs, createTestApp, directClient, target } from './support';

/**
 * How long a test's client keeps a socket open before closing it itself: far past every bound the
 * server applies here (BODY_TIMEOUT_MS, the 10 s for the small rest of a body, Node's 5 s
 * keep-alive timeout), so a socket closed by the server before it was closed in time, whatever
 * the machine's load.
 */
const CLIENT_PATIENCE_MS = 40_000;
/** A test that waits for the server to close a socket, with room for CLIENT_PATIENCE_MS. */
const SOCKET_TEST_TIMEOUT_MS = CLIENT_PATIENCE_MS + 20_000;

interface SocketOutcome {
  /** Everything the server sent. */
  received: string;
  /** Milliseconds from connecting to the socket's close. */
  closedAfterMs: number;
  /** The server closed it, before the client lost patience. */
  closedByServer: boolean;
}

/**
 * Opens a socket and resolves when it is closed, with what the server sent; the client closes it
 * after CLIENT_PATIENCE_MS.
 */
function openSocket(port: number): { socket: Socket; closed: Promise<SocketOutcome> } {
  const started = performance.now();
  const socket = connect({ host: '127.0.0.1', port });
  let received = '';
  let closedByServer = true;
  const patience = setTimeout(() => {
    closedByServer = false;
    socket.destroy();
  }, CLIENT_PATIENCE_MS);
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => undefined); // a reset after the server closed is expected
  const closed = new Promise<SocketOutcome>((resolve) =>
    socket.once('close', () => {
      clearTimeout(patience);
      resolve({ received, closedAfterMs: performance.now() - started, closedByServer });
    }),
  );
  return { socket, closed };
}

/** Sends `head` (request line and headers, ending with a blank line), then a byte every 100 ms. */
function dribblingRequest(port: number, head: string): Promise<SocketOutcome> {
  const { socket, closed } = openSocket(port);
  socket.once('connect', () => {
    socket.write(head);
    const dribble = setInterval(() => {
      if (socket.destroyed || !socket.writable) clearInterval(dribble);
      else socket.write(' ');
    }, 100);
    socket.once('close', () => clearInterval(dribble));
  });
  return closed;
}

/** A slow client: a POST with a 1,000-byte JSON body, one byte every 100 ms after the first. */
function slowPost(port: number, path: string): Promise<SocketOutcome> {
  return dribblingRequest(
    port,
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
      'Content-Length: 1000\r\n\r\n{',
  );
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
      const { received, closedAfterMs, closedByServer } = await slowPost(server.port, path);
      const [head = '', body] = received.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 408 /);
      expect(head).toMatch(/\r\nConnection: close/i);
      expect(head).toMatch(/\r\nContent-Type: application\/json/i);
      expect(JSON.parse(body ?? '')).toEqual({
        error: 'Request body not received within 500 ms',
      });
      // Not before BODY_TIMEOUT_MS (a slower machine only makes it later), and by the server.
      expect(closedAfterMs).toBeGreaterThanOrEqual(450);
      expect(closedByServer).toBe(true);
    },
    SOCKET_TEST_TIMEOUT_MS,
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
    // A Node timer waits at most 2^31 - 1 ms; a longer delay would fire at once.
    expect(loadConfig({ BODY_TIMEOUT_MS: String(2 ** 31 - 1) }).bodyTimeoutMs).toBe(2 ** 31 - 1);
    for (const name of ['BODY_TIMEOUT_MS', 'POOL_MAX_LIFETIME_MS', 'POOL_WAIT_TIMEOUT_MS']) {
      expect(() => loadConfig({ [name]: String(2 ** 31) })).toThrow(`${name} must be`);
    }
    expect(() => loadConfig({ MAX_CONNECTIONS: 'many' })).toThrow(/^MAX_CONNECTIONS must be/);
  });
});

describe('an answer given before the body arrived', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({
      port: 0,
      hostname: '127.0.0.1',
      logLevel: 'silent',
      bodyTimeoutMs: 5_000,
      statsToken: 'statistics-token',
    });
  });
  afterAll(() => server.close());

  const withBody = (line: string, headers = 'Content-Type: application/json\r\n'): string =>
    `${line} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}Content-Length: 1000000000\r\n\r\n`;

  it.each([
    ['an unknown path', withBody('POST /api/nope'), 404],
    ['a route that takes no body', withBody('GET /healthz'), 200],
    [
      'a refused Origin',
      withBody(
        'POST /api/query',
        'Content-Type: application/json\r\nOrigin: https://evil.example\r\n',
      ),
      403,
    ],
    ['a refused Content-Type', withBody('POST /api/query', 'Content-Type: text/plain\r\n'), 415],
    ['a body declared too large', withBody('POST /api/query'), 413],
    ['the metrics (an Express route of its own)', withBody('GET /metrics'), 200],
    ['the console (static files)', withBody('GET /'), 200],
    ['a refused statistics token', withBody('GET /api/stats/pools'), 401],
    [
      'a chunked body to a route that takes none',
      'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n',
      200,
    ],
  ])(
    "closes the connection after answering %s, not waiting for the rest at the client's pace",
    async (_what, head, status) => {
      const { received, closedByServer } = await dribblingRequest(server.port, head);
      expect(received).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(received).toMatch(/\r\nConnection: close\r\n/i);
      // Before: the socket stayed as long as a byte came every few seconds.
      expect(closedByServer).toBe(true);
    },
    SOCKET_TEST_TIMEOUT_MS,
  );

  const refusedOrigin = (length: number): string =>
    'POST /api/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
    `Origin: https://evil.example\r\nContent-Length: ${length}\r\n\r\n`;

  it('reads the small rest of a body after answering early, and keeps the connection', async () => {
    // A client still sending its body when the answer came would otherwise see a reset.
    const { socket, closed } = openSocket(server.port);
    socket.once('connect', () => {
      socket.write(`${refusedOrigin(100)}${'x'.repeat(50)}`);
      setTimeout(() => {
        socket.write(
          `${'x'.repeat(50)}GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
        );
      }, 300);
    });
    const { received } = await closed;
    expect(received.match(/HTTP\/1\.1 \d{3} /g)).toEqual(['HTTP/1.1 403 ', 'HTTP/1.1 200 ']);
    expect(received.split('HTTP/1.1 200 ')[0]).not.toMatch(/\r\nConnection: close\r\n/i);
  });

  it(
    'closes the connection when the small rest does not come in time',
    async () => {
      // A byte every 100 ms: the idle keep-alive timeout never fires, 1,000 bytes would take 100 s.
      const { received, closedByServer } = await dribblingRequest(server.port, refusedOrigin(1000));
      expect(received).toMatch(/^HTTP\/1\.1 403 /);
      expect(closedByServer).toBe(true);
    },
    SOCKET_TEST_TIMEOUT_MS,
  );

  it('keeps the connection of a request whose body was read', async () => {
    const { socket, closed } = openSocket(server.port);
    socket.once('connect', () =>
      socket.write(
        'POST /api/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
          'Content-Length: 2\r\n\r\n{}',
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(socket.destroyed).toBe(false);
    socket.destroy();
    const { received } = await closed;
    // Refused after reading it (fields missing): the connection can carry the next request.
    expect(received).toMatch(/^HTTP\/1\.1 400 /);
    expect(received).not.toMatch(/\r\nConnection: close\r\n/i);
  });

  it(
    'closes an idle connection after POST /api/copy like after any other request',
    async () => {
      // The upload is refused at once (no data part); the connection stays for the next request,
      // for Node's keep-alive timeout (5 s) and no longer.
      const { socket, closed } = openSocket(server.port);
      const body = '--x--\r\n';
      socket.once('connect', () =>
        socket.write(
          'POST /api/copy HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
            `Content-Type: multipart/form-data; boundary=x\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        ),
      );
      const { received, closedAfterMs, closedByServer } = await closed;
      expect(received).toMatch(/^HTTP\/1\.1 400 /);
      // Not before the keep-alive timeout (a slower machine only makes it later), and by the server.
      expect(closedAfterMs).toBeGreaterThan(4_000);
      expect(closedByServer).toBe(true);
    },
    SOCKET_TEST_TIMEOUT_MS,
  );
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
      // Closed by the server without an answer: refused, not served.
      const refused = await sixth.closed;
      expect(refused).toMatchObject({ received: '', closedByServer: true });

      held.pop()?.destroy();
      // Accepted again once the server has seen the close.
      await eventually(async () => held.push(await holdOne()));
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

describe('MAX_RESULT_BYTES_TOTAL', () => {
  // Each row counts about 1 KB; 1,000 rows take about 768 KiB of a 1 MiB shared budget beyond a
  // request's own first 256 KiB.
  const ROWS = "SELECT repeat('x', 1000) AS v FROM generate_series(1, 1000)";
  const HOLDING_LOCK = 4343;

  /** A server whose requests may each hold `ownMiB`, and all of them `totalMiB` beyond 256 KiB each. */
  const serverWithBudgets = (
    ownMiB: number,
    totalMiB: number,
    more: Partial<Parameters<typeof startServer>[0]> = {},
  ) =>
    startServer({
      port: 0,
      hostname: '127.0.0.1',
      logLevel: 'silent',
      maxResultBytes: ownMiB * 1024 * 1024,
      maxResultBytesTotal: totalMiB * 1024 * 1024,
      ...more,
    });

  it('cuts answers while others hold the shared budget, and gives it back when they are done', async () => {
    const server = await serverWithBudgets(4, 1);
    const post = async (sql: string) => {
      const response = await fetch(`${server.url}/api/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(target({ sql })),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as Record<string, unknown> & {
        results?: Record<string, unknown>[];
      };
    };
    /** Whole: all its rows, and not marked truncated. */
    const expectWhole = (answer: Record<string, unknown>, rows: number): void => {
      expect(answer.truncated ?? false).toBe(false);
      expect(answer.rows).toHaveLength(rows);
    };
    const observer = await directClient();
    try {
      // Whole while alone; then held by a script whose next statement waits for a lock the
      // test holds (a script that writes runs in order: the rows were read before the wait).
      expectWhole(await post(ROWS), 1000);
      await observer.query('SELECT pg_advisory_lock($1)', [HOLDING_LOCK]);
      const holding = post(`${ROWS}; SELECT 1 FROM pg_advisory_xact_lock_shared(${HOLDING_LOCK})`);
      await eventually(async () => {
        const { rows } = await observer.query(
          "SELECT 1 FROM pg_stat_activity WHERE wait_event = 'advisory' AND query LIKE $1",
          [`%pg_advisory_xact_lock_shared(${HOLDING_LOCK})%`],
        );
        return rows.length === 1;
      });
      const squeezed = await post(ROWS);
      await observer.query('SELECT pg_advisory_unlock($1)', [HOLDING_LOCK]);
      expect(squeezed).toMatchObject({
        truncated: true,
        truncatedBy: 'bytes',
        warnings: [expect.stringMatching(/^Rows were cut at MAX_RESULT_BYTES_TOTAL: /)],
      });
      expect((squeezed.rows as unknown[]).length).toBeLessThan(600);
      // A small answer fits in a request's own first 256 KiB, whatever others hold.
      expectWhole(await post('SELECT 1 AS one'), 1);
      const held = await holding;
      expectWhole(held.results?.[0] as Record<string, unknown>, 1000);
      expectWhole(await post(ROWS), 1000);
    } finally {
      await observer.end();
      await server.close();
    }
  });

  /** 16 rows of 1 MB: more than loopback's buffers take while the client reads nothing. */
  const sixteenMegabytes = (timeoutMs?: number): string =>
    JSON.stringify(
      target({
        sql: "SELECT repeat('x', 1000000) AS v FROM generate_series(1, 16)",
        ...(timeoutMs ? { timeoutMs } : {}),
      }),
    );

  const postTo = async (server: RunningServer, body: string) => {
    const response = await fetch(`${server.url}/api/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    return (await response.json()) as { rows: unknown[]; truncated?: boolean };
  };

  /** Another such answer comes back whole: no share of the budget is still held. */
  const expectAllSixteenRows = async (server: RunningServer): Promise<void> => {
    const whole = await postTo(server, sixteenMegabytes());
    expect(whole.truncated ?? false).toBe(false);
    expect(whole.rows).toHaveLength(16);
  };

  /**
   * Sends `body` and reads none of the answer; resolves once its head came (the service has
   * answered, the rows are being written). Destroy the request to go away.
   */
  const sendUnread = async (
    server: RunningServer,
    body: string,
    path = '/api/query',
    headers: Record<string, string> = {},
  ) => {
    const unread = httpRequest(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
    });
    unread.on('error', () => undefined);
    await new Promise<void>((resolve) => {
      unread.on('response', (answer: IncomingMessage) => {
        answer.pause();
        resolve();
      });
      unread.end(body);
    });
    return unread;
  };

  it('counts an answer until it is written, and gives it back when its client goes away', async () => {
    const server = await serverWithBudgets(32, 20);
    const unread = await sendUnread(server, sixteenMegabytes());
    try {
      expect(await postTo(server, sixteenMegabytes())).toMatchObject({ truncated: true });
      unread.destroy();
      await eventually(() => expectAllSixteenRows(server), { everyMs: 200 });
    } finally {
      unread.destroy();
      await server.close();
    }
  });

  /** The 16 MB query, sent in a new session; its client reads nothing. */
  const sendUnreadInSession = async (server: RunningServer) => {
    const opened = await fetch(`${server.url}/api/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(target({})),
    });
    const { sessionId } = (await opened.json()) as { sessionId: string };
    const { sql } = JSON.parse(sixteenMegabytes()) as Record<string, unknown>;
    return sendUnread(server, JSON.stringify({ sql }), `/api/sessions/${sessionId}/query`);
  };

  it.each([
    ['an answer', (server: RunningServer) => sendUnread(server, sixteenMegabytes())],
    ['a session answer', sendUnreadInSession],
  ])(
    'gives up %s its client stops reading, freeing its share, and logs it as cut',
    async (_what, sendUnreadQuery) => {
      const { logger, lines } = captureLogs('info');
      const server = await serverWithBudgets(32, 20, { answerStallTimeoutMs: 2_000, logger });
      const unread = await sendUnreadQuery(server);
      try {
        // While the answer waits for its client, it holds 16 of the 20 MiB: another is cut.
        expect(await postTo(server, sixteenMegabytes())).toMatchObject({ truncated: true });
        // Given up after the stall limit; its share is back.
        await eventually(() => expectAllSixteenRows(server), { withinMs: 30_000, everyMs: 500 });
        // Its status was sent: it is logged with it, as cut, not as a 200 delivered.
        await eventually(() => {
          const given = lines().filter((line) => line.msg === 'request' && line.cut === true);
          expect(given).toEqual([expect.objectContaining({ status: 200, cut: true })]);
        });
      } finally {
        unread.destroy();
        await server.close();
      }
    },
    60_000,
  );

  it('lets a client pause an answer for longer than the request’s timeoutMs', async () => {
    // A slow but steady reader moves nothing Node can see until the kernel's send buffer has
    // room again: the request's short timeoutMs must not become the answer's stall limit (a minute
    // here, past the pause below however slowly it runs).
    const server = await serverWithBudgets(32, 64, { answerStallTimeoutMs: 60_000 });
    const unread = httpRequest(`${server.url}/api/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    try {
      const answer = await new Promise<IncomingMessage>((resolve, reject) => {
        unread.on('response', resolve);
        unread.on('error', reject);
        unread.end(sixteenMegabytes(1000));
      });
      answer.pause();
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      const chunks: Buffer[] = [];
      for await (const chunk of answer) chunks.push(chunk as Buffer);
      const whole = JSON.parse(Buffer.concat(chunks).toString()) as { rows: unknown[] };
      expect(whole.rows).toHaveLength(16);
    } finally {
      unread.destroy();
      await server.close();
    }
  }, 60_000);

  /** One row of 16 MB: it stays in flight while its stream's client reads nothing. */
  const oneLargeRow = JSON.stringify(target({ sql: "SELECT repeat('x', 16000000) AS v" }));
  const NDJSON = { accept: 'application/x-ndjson' };

  const streamLines = async (server: RunningServer, body: string) => {
    const response = await fetch(`${server.url}/api/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...NDJSON },
      body,
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    return text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, Record<string, unknown>>);
  };

  it('counts a streamed row until its client took it, and cuts another stream meanwhile', async () => {
    const server = await serverWithBudgets(32, 20);
    const unread = await sendUnread(server, oneLargeRow, '/api/query', NDJSON);
    try {
      const cut = await streamLines(server, oneLargeRow);
      expect(cut.filter((line) => 'row' in line)).toHaveLength(0);
      expect(cut).toContainEqual({
        end: expect.objectContaining({ truncated: true, truncatedBy: 'bytes' }),
      });
      expect(cut.at(-1)?.done?.warnings).toEqual([
        expect.stringMatching(/^Rows were cut at MAX_RESULT_BYTES_TOTAL: /),
      ]);
      // Streams and JSON answers share the budget.
      expect(await postTo(server, sixteenMegabytes())).toMatchObject({ truncated: true });
      unread.destroy();
      await eventually(
        async () => {
          const whole = await streamLines(server, oneLargeRow);
          expect(whole.filter((line) => 'row' in line)).toHaveLength(1);
          expect(whole.at(-1)?.done?.warnings).toBeUndefined();
        },
        { everyMs: 200 },
      );
      // A stream read to its end holds nothing afterwards.
      await expectAllSixteenRows(server);
    } finally {
      unread.destroy();
      await server.close();
    }
  }, 60_000);

  it('counts a COPY line until its client took it, and stops another COPY meanwhile', async () => {
    const server = await serverWithBudgets(32, 20);
    const copy = JSON.stringify(target({ sql: "COPY (SELECT repeat('x', 16000000)) TO STDOUT" }));
    const unread = await sendUnread(server, copy);
    try {
      const stopped = await fetch(`${server.url}/api/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: copy,
      });
      expect(stopped.status).toBe(507);
      expect(await stopped.json()).toMatchObject({
        error: {
          code: 'RESULT_TOO_LARGE',
          message: expect.stringMatching(/MAX_RESULT_BYTES_TOTAL/),
        },
      });
      expect(await postTo(server, sixteenMegabytes())).toMatchObject({ truncated: true });
      unread.destroy();
      await eventually(
        async () => {
          const whole = await fetch(`${server.url}/api/query`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: copy,
          });
          expect((await whole.text()).length).toBe(16_000_001);
        },
        { everyMs: 200 },
      );
      await expectAllSixteenRows(server);
    } finally {
      unread.destroy();
      await server.close();
    }
  }, 60_000);

  it('defaults to an eighth of the heap, and refuses a malformed value', () => {
    const { getHeapStatistics } = jest.requireActual<typeof import('node:v8')>('node:v8');
    expect(loadConfig({}).maxResultBytesTotal).toBe(
      Math.floor(getHeapStatistics().heap_size_limit / 8),
    );
    expect(loadConfig({ MAX_RESULT_BYTES_TOTAL: '0' }).maxResultBytesTotal).toBe(0);
    expect(() => loadConfig({ MAX_RESULT_BYTES_TOTAL: '1e9' })).toThrow(/MAX_RESULT_BYTES_TOTAL/);
  });
});
