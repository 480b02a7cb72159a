/**
 * Requests pipelined on one connection run in the order they came, each after the answer before
 * it (docs/decisions.md 10.54), against the real server and PostgreSQL, over raw sockets.
 */
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { eventually } from '@sqlgate/testing';
import { startServer, type RunningServer } from '../src/server';
import { rawExchange } from './raw-http';
import { captureLogs, sql, target } from './support';

const table = `pipelined_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const logs = captureLogs('info');
let server: RunningServer;

beforeAll(async () => {
  await sql(`CREATE TABLE ${table} (id int)`);
  // A small shared result budget: answers held and never given back would exhaust it.
  server = await startServer({
    port: 0,
    hostname: '127.0.0.1',
    logger: logs.logger,
    maxResultBytesTotal: 8 * 1024 * 1024,
  });
});
afterAll(async () => {
  await server.close();
  await sql(`DROP TABLE ${table}`);
});

/** A POST /api/query request's bytes; `headers` are added as written. */
function queryRequest(body: Record<string, unknown>, headers = ''): string {
  const text = JSON.stringify({ ...target(), ...body });
  return (
    `POST /api/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${headers}` +
    `Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`
  );
}

/** The JSON bodies of the answers in `received`, in order. */
function answerBodies(received: string): unknown[] {
  return [...received.matchAll(/\r\n\r\n(\{.*?\})(?=HTTP\/1\.1 |$)/gs)].map(
    ([, body]) => JSON.parse(body as string) as unknown,
  );
}

const count = async (): Promise<number> =>
  Number((await sql(`SELECT count(*)::int AS n FROM ${table}`))[0]?.n);

beforeEach(() => sql(`TRUNCATE ${table}`));

it('runs a read sent after a write on the same connection after the write', async () => {
  const received = await rawExchange(
    server.port,
    queryRequest({
      sql: `INSERT INTO ${table} SELECT 1 FROM pg_sleep(0.3) RETURNING id`,
    }) + queryRequest({ sql: `SELECT count(*)::int AS n FROM ${table}` }, 'Connection: close\r\n'),
  );
  const [insert, read] = answerBodies(received) as { rows: unknown[] }[];
  expect(insert?.rows).toEqual([{ id: 1 }]);
  expect(read?.rows).toEqual([{ n: 1 }]);
});

it('answers the requests before bytes it cannot parse, then refuses those bytes', async () => {
  const received = await rawExchange(
    server.port,
    `${queryRequest({ sql: `INSERT INTO ${table} VALUES (7)` })}NOT HTTP AT ALL\r\n\r\n`,
  );
  expect(received).toMatch(/^HTTP\/1\.1 200 /);
  expect(received).toMatch(/\r\n\r\nHTTP\/1\.1 400 |\}HTTP\/1\.1 400 /);
  const [insert, refusal] = answerBodies(received);
  expect(insert).toMatchObject({ command: 'INSERT', rowCount: 1 });
  expect(refusal).toEqual({ error: 'Malformed HTTP request' });
  expect(await count()).toBe(1);
});

it('runs nothing pipelined behind an answer that closes the connection', async () => {
  const id = randomUUID();
  // A GET that says it will send a body once told to: its answer closes the connection, since
  // the body may still come (docs/decisions.md 10.17).
  const received = await rawExchange(
    server.port,
    'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n\r\n' +
      queryRequest({ sql: `INSERT INTO ${table} VALUES (1)` }, `X-Request-Id: ${id}\r\n`),
  );
  expect(answerBodies(received)).toEqual([{ status: 'ok' }]);
  expect(received).toMatch(/\r\nConnection: close\r\n/i);
  // Its turn comes when the connection has closed: logged as a request whose caller went away.
  await eventually(() =>
    expect(logs.lines().filter((line) => line.reqId === id)).toEqual([
      expect.objectContaining({ status: 499, aborted: true }),
    ]),
  );
  expect(await count()).toBe(0);
});

it('gives back the memory of pipelined answers nobody read, and logs each request once', async () => {
  const ids: string[] = Array.from({ length: 30 }, () => randomUUID());
  const bigRead = "SELECT g, repeat('x', 200) AS pad FROM generate_series(1, 5000) g";
  const socket = connect(server.port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(ids.map((id) => queryRequest({ sql: bigRead }, `X-Request-Id: ${id}\r\n`)).join(''));
  // The client reads nothing, then goes away.
  socket.pause();
  await new Promise((resolve) => setTimeout(resolve, 500));
  socket.destroy();
  await eventually(() => {
    const logged = logs.lines().filter((line) => ids.includes(line.reqId as string));
    expect(logged).toHaveLength(ids.length);
    expect(new Set(logged.map((line) => line.reqId)).size).toBe(ids.length);
  });
  // Nothing holds the shared result budget any more: a large read comes back whole.
  const whole = (await fetch(`${server.url}/api/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...target(), sql: bigRead }),
  }).then((r) => r.json())) as { rows: unknown[]; truncated?: boolean };
  expect(whole.truncated).toBeUndefined();
  expect(whole.rows).toHaveLength(5000);
});

it('answers a request ahead of one whose body the parser refuses, then refuses that one under its id', async () => {
  const refusedId = randomUUID();
  const received = await rawExchange(
    server.port,
    queryRequest({ sql: `INSERT INTO ${table} VALUES (3)` }) +
      'POST /api/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      `X-Request-Id: ${refusedId}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"sql\r\nZZ\r\n`,
  );
  expect(answerBodies(received)).toEqual([
    expect.objectContaining({ command: 'INSERT', rowCount: 1 }),
    { error: 'Malformed HTTP request' },
  ]);
  expect(received).toMatch(new RegExp(`HTTP/1\\.1 400 [^]*X-Request-Id: ${refusedId}\\r\\n`, 'i'));
  expect(await count()).toBe(1);
  await eventually(() =>
    expect(logs.lines().filter((line) => line.reqId === refusedId)).toEqual([
      expect.objectContaining({ status: 400 }),
    ]),
  );
});

it('stops reading a connection whose requests wait in their dozens, so it cannot queue thousands', async () => {
  const tag = randomUUID();
  const sent = 5000;
  const socket = connect(server.port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.on('data', () => undefined);
  socket.on('error', () => undefined);
  const healthz = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: ${tag}\r\n\r\n`;
  socket.write(queryRequest({ sql: 'SELECT pg_sleep(0.5)' }) + healthz.repeat(sent));
  await new Promise((resolve) => setTimeout(resolve, 200));
  socket.destroy();
  // Every request the server took in is logged once its connection is gone; it took in a
  // chunk's worth past the bound, not all that was sent.
  const logged = (): number => logs.lines().filter((line) => line.reqId === tag).length;
  await eventually(() => expect(logged()).toBeGreaterThan(0));
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(logged()).toBeLessThan(sent / 2);
});
