/**
 * A body refused before it arrived (413 for one over MAX_BODY_BYTES) while its client is still
 * sending it, chunked or not: the rest is read and dropped, up to a bound, so that the client reads
 * the answer instead of a reset (docs/decisions.md 10.17, 10.39). Node's own HTTP client against a
 * real listening server.
 */
import http from 'node:http';
import { startServer, type RunningServer } from '../src/server';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
});
afterAll(() => server.close());

interface Outcome {
  status?: number;
  body?: string;
  error?: string;
}

/** POSTs `body` with http.request, declaring its length; resolves with what the client saw. */
function postWithNodeClient(
  path: string,
  body: Buffer,
  agent: http.Agent | false,
  sockets: unknown[] = [],
): Promise<Outcome> {
  return new Promise((resolve) => {
    const outcome: Outcome = {};
    const client = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': body.length },
        agent,
      },
      (response) => {
        outcome.status = response.statusCode;
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          outcome.body = text;
          // An error of the request may still come after the answer (a reset while writing).
          setTimeout(() => resolve(outcome), 200);
        });
      },
    );
    client.on('socket', (socket) => sockets.push(socket));
    client.on('error', (error: NodeJS.ErrnoException) => {
      outcome.error = error.code ?? error.message;
      resolve(outcome);
    });
    client.end(body);
  });
}

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
afterAll(() => keepAlive.destroy());

it.each([
  ['keeping its connection', keepAlive],
  ['asking to close it (Connection: close)', false as const],
])(
  'lets a client sending 5 MB, %s, read its 413 in JSON, without EPIPE or a reset',
  async (_how, agent) => {
    const body = Buffer.alloc(5 * 1024 * 1024, 'x');
    const outcome = await postWithNodeClient('/api/query', body, agent);
    expect(outcome).toEqual({
      status: 413,
      body: JSON.stringify({ error: 'Request body too large' }),
    });
  },
);

it('serves the next request on the connection whose rest it drained', async () => {
  const sockets: unknown[] = [];
  const outcomes: Outcome[] = [];
  for (const size of [5 * 1024 * 1024, 10]) {
    outcomes.push(
      await postWithNodeClient('/api/query', Buffer.alloc(size, ' '), keepAlive, sockets),
    );
  }
  expect(outcomes.map((outcome) => outcome.status)).toEqual([413, 400]);
  expect(sockets).toHaveLength(2);
  expect(sockets[1]).toBe(sockets[0]);
});

/**
 * POSTs `body` with http.request, chunked (no Content-Length) unless `declared`; resolves with
 * what the client saw once the request closed, so an error that follows the answer is counted.
 */
function postAndClose(body: Buffer, declared: boolean, agent: http.Agent): Promise<Outcome> {
  return new Promise((resolve) => {
    const outcome: Outcome = {};
    const client = http.request({
      host: '127.0.0.1',
      port: server.port,
      path: '/api/query',
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(declared ? { 'content-length': body.length } : {}),
      },
      agent,
    });
    client.on('response', (response) => {
      outcome.status = response.statusCode;
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => (outcome.body = text));
    });
    client.on('error', (error: NodeJS.ErrnoException) => {
      outcome.error = error.code ?? error.message;
    });
    client.on('close', () => resolve(outcome));
    client.end(body);
  });
}

const MiB = 1024 * 1024;

describe.each([
  ['4 MiB chunked', 4 * MiB, false],
  ['20 MiB chunked', 20 * MiB, false],
  ['20 MiB with its Content-Length', 20 * MiB, true],
  ['64 MiB chunked', 64 * MiB, false],
  ['64 MiB with its Content-Length', 64 * MiB, true],
])('a body of %s, too large', (_shape, size, declared) => {
  // What http.request uses unless told otherwise (Node's global agent keeps connections).
  const agent = new http.Agent({ keepAlive: true });
  afterAll(() => agent.destroy());

  it('is answered 413 in JSON that Node’s client reads every time, never EPIPE or a reset', async () => {
    const body = Buffer.alloc(size, ' ');
    const outcomes: Outcome[] = [];
    for (let run = 0; run < 20; run++) outcomes.push(await postAndClose(body, declared, agent));
    const expected = { status: 413, body: JSON.stringify({ error: 'Request body too large' }) };
    expect(outcomes).toEqual(outcomes.map(() => expected));
  }, 120_000);
});
