/** What Node's HTTP parser refuses is answered in JSON too (docs/decisions.md 5). */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import express from 'express';
import { eventually } from '@sqlgate/testing';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { createServiceFromConfig, startServer, type RunningServer } from '../src/server';
import { rawExchange } from './raw-http';
import { captureLogs, target } from './support';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
});
afterAll(() => server.close());

/** Sends raw bytes and returns everything the server answered before closing. */
const raw = (bytes: string, port = server.port): Promise<string> => rawExchange(port, bytes);

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
  // A new id each time: the bytes named none that could be trusted.
  expect(head).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/i);
  expect(JSON.parse(body)).toEqual({ error: expect.any(String) });
});

describe('a request without Host', () => {
  it.each(['GET /healthz', 'POST /api/query', 'GET /api/stats/pools', 'OPTIONS /api/query'])(
    'over HTTP/1.1 (%s) is answered 400 in JSON, with its request id',
    async (line) => {
      const body = line.startsWith('POST') ? '{"sql":"SELECT 1"}' : '';
      const answer = await raw(
        `${line} HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
          `X-Request-Id: no-host-1\r\nConnection: close\r\n\r\n${body}`,
      );
      const [head = '', text = ''] = answer.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 400 /);
      expect(head).toMatch(/\r\nContent-Type: application\/json/i);
      expect(head).toMatch(/\r\nX-Request-Id: no-host-1\r\n/i);
      expect(JSON.parse(text)).toEqual({ error: 'An HTTP/1.1 request must send a Host header' });
    },
  );

  it('over HTTP/1.0 is served: Host came with HTTP/1.1', async () => {
    const answer = await raw('GET /healthz HTTP/1.0\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('keeps the connection for the next request when it asked to', async () => {
    const answer = await raw(
      'GET /healthz HTTP/1.1\r\n\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
    );
    expect(answer.match(/HTTP\/1\.1 \d+ /g)).toEqual(['HTTP/1.1 400 ', 'HTTP/1.1 200 ']);
  });
});

/** The JSON 400 of a target that cannot be routed, with the request id the client sent. */
function expectMalformedTargetAnswer(answer: string, requestId: string): void {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  expect(head).toMatch(/^HTTP\/1\.1 400 /);
  expect(head).toContain(`\r\nX-Request-Id: ${requestId}\r\n`);
  expect(JSON.parse(body)).toEqual({ error: 'Malformed request target' });
}

it.each([
  'http://[::1]evil/api/query',
  'http://[/x',
  'http://[::1]:8091:1/healthz',
  'http://',
  'http://127.0.0.1:99999/healthz',
])('answers the malformed target %s with 400 in JSON, with a request id', async (url) => {
  const answer = await raw(
    `GET ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: bad-target\r\nConnection: close\r\n\r\n`,
  );
  expectMalformedTargetAnswer(answer, 'bad-target');
});

it('answers the asterisk form with 400 in JSON, but OPTIONS * with the methods served', async () => {
  const posted = await raw(
    'POST * HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      'Content-Length: 2\r\nX-Request-Id: star-post\r\nConnection: close\r\n\r\n{}',
  );
  expectMalformedTargetAnswer(posted, 'star-post');
  const options = await raw(
    'OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: star-options\r\nConnection: close\r\n\r\n',
  );
  expect(options).toMatch(/^HTTP\/1\.1 204 /);
  expect(options).toMatch(/\r\nAllow: GET, POST, DELETE, OPTIONS\r\n/i);
  expect(options).toMatch(/\r\nX-Request-Id: star-options\r\n/i);
});

describe('an app used as a listener', () => {
  let service: ReturnType<typeof createServiceFromConfig>;
  let listener: Server;
  let port: number;
  beforeAll(async () => {
    service = createServiceFromConfig(loadConfig({}));
    listener = createServer(createApp({ service }));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    ({ port } = listener.address() as AddressInfo);
  });
  afterAll(async () => {
    await new Promise((resolve) => listener.close(resolve));
    await service.close();
  });

  it('answers a malformed target its router can read in JSON too, and OPTIONS *', async () => {
    const answer = await raw(
      'GET http://127.0.0.1:99999/api/stats/pools HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
        'X-Request-Id: embedded-bad-target\r\nConnection: close\r\n\r\n',
      port,
    );
    expectMalformedTargetAnswer(answer, 'embedded-bad-target');
    const posted = await raw(
      'POST * HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        'Content-Length: 2\r\nX-Request-Id: embedded-star\r\nConnection: close\r\n\r\n{}',
      port,
    );
    expectMalformedTargetAnswer(posted, 'embedded-star');
    const options = await raw(
      'OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
      port,
    );
    expect(options).toMatch(/^HTTP\/1\.1 204 /);
    expect(options).toMatch(/\r\nAllow: GET, POST, DELETE, OPTIONS\r\n/i);
  });

  it("answers * in an app mounted at its host's root", async () => {
    const host = express();
    host.use(createApp({ service }));
    const hosting = createServer(host);
    await new Promise<void>((resolve) => hosting.listen(0, '127.0.0.1', resolve));
    try {
      const hostPort = (hosting.address() as AddressInfo).port;
      const options = await raw(
        'OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
        hostPort,
      );
      expect(options).toMatch(/^HTTP\/1\.1 204 /);
      expect(options).toMatch(/\r\nAllow: GET, POST, DELETE, OPTIONS\r\n/i);
      const posted = await raw(
        'POST * HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nX-Request-Id: hosted-star\r\n' +
          'Connection: close\r\n\r\n',
        hostPort,
      );
      expectMalformedTargetAnswer(posted, 'hosted-star');
    } finally {
      await new Promise((resolve) => hosting.close(resolve));
    }
  });

  it("leaves a target its router cannot read to Express's own 404 (docs/decisions.md 10.53)", async () => {
    // Express hands it to its final handler before any middleware runs; the standalone server's
    // listener answers it first (above).
    const answer = await raw(
      'GET http://[::1]evil/api/stats/pools HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
      port,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    expect(answer).toMatch(/\r\nContent-Type: text\/html/i);
  });
});

it('answers an Expect other than 100-continue with 417 in JSON, with a request id', async () => {
  const answer = await raw(
    'POST /api/query HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: teapot\r\nX-Request-Id: expect-1\r\n' +
      'Content-Type: application/json\r\nContent-Length: 2\r\n\r\n',
  );
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  expect(head).toMatch(/^HTTP\/1\.1 417 /);
  expect(head).toMatch(/\r\nContent-Type: application\/json/i);
  expect(head).toMatch(/\r\nX-Request-Id: expect-1\r\n/i);
  expect(JSON.parse(body)).toEqual({ error: "Expect 'teapot' is not supported" });
});

it.each([
  ['beside 100-continue', 'Expect: 100-continue, teapot\r\n'],
  ['on a second Expect line', 'Expect: 100-continue\r\nExpect: teapot\r\n'],
])('answers an expectation %s with 417 and never continues', async (_where, lines) => {
  const answer = await raw(
    `POST /api/query HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines}Content-Type: application/json\r\n` +
      'Content-Length: 2\r\n\r\n',
  );
  expect(answer).toMatch(/^HTTP\/1\.1 417 /);
  expect(answer).not.toContain('100 Continue');
});

it('continues a request that expects 100-continue only, in any case', async () => {
  const body = JSON.stringify(target({ sql: 'SELECT 1 AS one' }));
  const answer = await raw(
    'POST /api/query HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-Continue\r\n' +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
  );
  expect(answer).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
});

it.each([
  [
    'a refused Origin (403)',
    'POST /api/query',
    'Origin: https://evil.example\r\nContent-Length: 20\r\n',
    403,
  ],
  ['a body declared too large (413)', 'POST /api/query', 'Content-Length: 999999999\r\n', 413],
  ['a refused Content-Type (415)', 'POST /api/copy', 'Content-Length: 20\r\n', 415],
])(
  'answers %s without inviting the body first, and closes the connection',
  async (_what, line, headers, status) => {
    // Only the head: a client that expects 100-continue waits before sending the body.
    const answer = await raw(
      `${line} HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n` +
        `Content-Type: application/json\r\n${headers}\r\n`,
    );
    expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(answer).not.toContain('100 Continue');
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
  },
);

it.each([
  ['GET /metrics', 'Express writes (res.send)'],
  ['GET /healthz', "sqlgate's writer writes"],
])('closes the connection after %s, an answer %s, given before the body arrived', async (line) => {
  // A chunked body that never comes: the answer leaves first, and must not wait for it.
  const answer = await raw(
    `${line} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n`,
  );
  expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  expect(answer).toMatch(/\r\nConnection: close\r\n/i);
});

it('invites the body of an upload once the request is accepted', async () => {
  const multipart =
    '--XB\r\nContent-Disposition: form-data; name="request"\r\n\r\n' +
    `${JSON.stringify(target({ sql: 'SELECT 1' }))}\r\n--XB--\r\n`;
  const socket = connect(server.port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    received += chunk;
    // The body goes only after the invitation, as curl sends a large upload.
    if (received.startsWith('HTTP/1.1 100 Continue\r\n\r\n') && !socket.writableEnded) {
      socket.end(multipart);
    }
  });
  socket.write(
    'POST /api/copy HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nConnection: close\r\n' +
      `Content-Type: multipart/form-data; boundary=XB\r\nContent-Length: ${multipart.length}\r\n\r\n`,
  );
  await new Promise((resolve) => socket.on('close', resolve));
  // Accepted, read, and refused for what it holds (not a COPY): the invitation came first.
  expect(received).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 400 /);
});

it('answers in JSON what the parser refuses after an answer written whole on the same connection', async () => {
  const socket = connect(server.port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8');
  const closed = new Promise((resolve) => socket.on('close', resolve));
  socket.on('data', (chunk: string) => {
    received += chunk;
    // The first answer is complete (its body is JSON): the connection is free for another answer.
    if (received.endsWith('}') && !received.includes('Malformed'))
      socket.write('NOT HTTP AT ALL\r\n\r\n');
  });
  socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  await closed;
  expect(received.match(/HTTP\/1\.1 \d{3} /g)).toEqual(['HTTP/1.1 200 ', 'HTTP/1.1 400 ']);
  expect(received).toMatch(/\{"error":"Malformed HTTP request"\}$/);
});

it('answers CONNECT with 501 in JSON instead of dropping the socket', async () => {
  const answer = await raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  expect(head).toMatch(/^HTTP\/1\.1 501 /);
  expect(head).toMatch(/\r\nX-Request-Id: /i);
  expect(JSON.parse(body)).toEqual({ error: 'CONNECT is not supported' });
});

it('releases the socket after answering CONNECT, even to a client that keeps its end open', async () => {
  // One connection at most: a socket held after its 501 would refuse the next request.
  const single = await startServer({
    port: 0,
    hostname: '127.0.0.1',
    logLevel: 'silent',
    maxConnections: 1,
  });
  const socket = connect({ port: single.port, host: '127.0.0.1', allowHalfOpen: true });
  try {
    const answer = await new Promise<string>((resolve, reject) => {
      socket.once('connect', () =>
        socket.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'),
      );
      let received = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (received += chunk));
      // The server's end arrives; this client never ends its own.
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 501 /);
    // Served once the server has seen its socket go (a held one would refuse it for ever).
    await eventually(async () =>
      expect(await fetch(`${single.url}/healthz`)).toMatchObject({ status: 200 }),
    );
  } finally {
    socket.destroy();
    await single.close();
  }
});

it('logs the 417 and 501 answers with their request ids, session ids shortened', async () => {
  const { logger, lines } = captureLogs('info');
  const logging = await startServer({ port: 0, hostname: '127.0.0.1', logger });
  try {
    const session = 'a'.repeat(43);
    const expect417 = await raw(
      `POST /api/sessions/${session}/query?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        'Expect: teapot\r\nX-Request-Id: logged-417\r\nContent-Length: 2\r\n\r\n',
      logging.port,
    );
    expect(expect417).toMatch(/^HTTP\/1\.1 417 /);
    const connect501 = await raw(
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nX-Request-Id: logged-501\r\n\r\n',
      logging.port,
    );
    expect(connect501).toMatch(/^HTTP\/1\.1 501 /);
    const entry = lines().find((e) => e.reqId === 'logged-417');
    expect(entry).toMatchObject({ method: 'POST', status: 417, msg: 'request' });
    expect(String(entry?.path)).toMatch(/^\/api\/sessions\/a{1,12}[^a]*\/query$/);
    expect(lines().find((e) => e.reqId === 'logged-501')).toMatchObject({
      method: 'CONNECT',
      status: 501,
    });
    expect(JSON.stringify(lines())).not.toContain(session);
    const malformed = await raw('NOT HTTP AT ALL\r\n\r\n', logging.port);
    const id = /\r\nX-Request-Id: ([^\r]+)\r\n/i.exec(malformed)?.[1];
    expect(lines().find((e) => e.reqId === id)).toMatchObject({
      status: 400,
      parserError: 'HPE_INVALID_METHOD',
      msg: 'request',
    });
  } finally {
    await logging.close();
  }
});

it('logs a request whose body the parser refused part way once, with the refusal as its answer', async () => {
  const { logger, lines } = captureLogs('info');
  const logging = await startServer({ port: 0, hostname: '127.0.0.1', logger });
  try {
    const answer = await raw(
      'POST /api/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        'X-Request-Id: refused-chunk\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      logging.port,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/\r\nX-Request-Id: refused-chunk\r\n/i);
    await eventually(() =>
      expect(lines().filter((e) => e.msg === 'request')).toEqual([
        expect.objectContaining({ reqId: 'refused-chunk', path: '/api/query', status: 400 }),
      ]),
    );
    expect(lines()[0]).not.toHaveProperty('aborted');
  } finally {
    await logging.close();
  }
});

it('counts every answer given outside the routes in sqlgate_http_requests_total', async () => {
  const counting = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
  try {
    await raw(
      'POST /api/query HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: teapot\r\nContent-Length: 2\r\n\r\n',
      counting.port,
    );
    await raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', counting.port);
    await raw('NOT HTTP AT ALL\r\n\r\n', counting.port);
    await raw('NOT HTTP AT ALL\r\n\r\n', counting.port);
    const metrics = await (await fetch(`${counting.url}/metrics`)).text();
    const count = (labels: string): number | undefined => {
      const line = metrics
        .split('\n')
        .find((text) => text.startsWith(`sqlgate_http_requests_total{${labels}}`));
      return line === undefined ? undefined : Number(line.split(' ').pop());
    };
    expect(count('route="/api/query",method="POST",status="417"')).toBe(1);
    expect(count('route="unmatched",method="OTHER",status="501"')).toBe(1);
    expect(count('route="unmatched",method="OTHER",status="400"')).toBe(2);
  } finally {
    await counting.close();
  }
});
