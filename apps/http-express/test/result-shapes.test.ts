/**
 * What an answer says of its statements (docs/decisions.md 10.42), against sqlgate's HTTP server
 * and a real PostgreSQL, in JSON, in NDJSON and through the service as a library: columns that
 * share a name are named in `warnings`, a read stopped at maxRows says it was a SELECT, and every
 * NDJSON `error` line has one shape, a cancelled statement's too.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestApp, target, type TestApp } from './support';
import { readQueryBody } from '../src/contract';

let testApp: TestApp;
let server: Server;
let url: string;

beforeAll(async () => {
  testApp = createTestApp();
  server = testApp.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await testApp.close();
});

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function post(body: Json, accept = 'application/json', headers: Record<string, string> = {}) {
  return fetch(`${url}/api/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, ...headers },
    body: JSON.stringify(target(body)),
  });
}

async function json(body: Json): Promise<Json> {
  const response = await post(body);
  expect(response.status).toBe(200);
  return (await response.json()) as Json;
}

const parseLines = (text: string): Json[] =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Json);

async function ndjson(body: Json): Promise<Json[]> {
  const response = await post(body, 'application/x-ndjson');
  expect(response.status).toBe(200);
  return parseLines(await response.text());
}

describe('columns that share a name', () => {
  const sql = 'SELECT 1 AS a, 2 AS a, 3 AS b, 4 AS c, 5 AS b';

  it('are named in warnings, in JSON, NDJSON and through the library', async () => {
    const expected = [expect.stringMatching(/^Statement 0 .*"a", "b".*rowMode: 'array'/)];
    const answer = await json({ sql });
    expect(answer.rows).toEqual([{ a: 2, b: 5, c: 4 }]);
    expect(answer.warnings).toEqual(expected);
    const lines = await ndjson({ sql });
    expect(lines.at(-1)?.done.warnings).toEqual(expected);
    const { body } = await testApp.service.execute(readQueryBody(target({ sql })));
    expect((body as Json).warnings).toEqual(expected);
  });

  it('name the statement among several, and only the one that has them', async () => {
    const answer = await json({ sql: `SELECT 1 AS x; ${sql}` });
    expect(answer.warnings).toEqual([expect.stringMatching(/^Statement 1 .*"a", "b"/)]);
  });

  it('cost nothing in array rows, which keep every column', async () => {
    const answer = await json({ sql, rowMode: 'array' });
    expect(answer.rows).toEqual([[1, 2, 3, 4, 5]]);
    expect(answer).not.toHaveProperty('warnings');
  });
});

describe('a read stopped at maxRows', () => {
  it.each([
    ['SELECT generate_series(1, 10) AS g'],
    ['VALUES (1), (2), (3)'],
    ['WITH s AS (SELECT 1) SELECT generate_series(1, 10) AS g'],
    ['(SELECT generate_series(1, 10) AS g)'],
  ])('%s says SELECT, and no row count it cannot know', async (sql) => {
    const answer = await json({ sql, maxRows: 1 });
    expect(answer).toMatchObject({
      command: 'SELECT',
      rowCount: null,
      truncated: true,
      truncatedBy: 'rows',
    });
    expect(answer.rows).toHaveLength(1);
    const lines = await ndjson({ sql, maxRows: 1 });
    expect(lines.find((line) => 'end' in line)?.end).toMatchObject({
      command: 'SELECT',
      rowCount: null,
      truncated: true,
    });
  });

  it('that ran to its end keeps its own tag and count', async () => {
    const answer = await json({ sql: 'SELECT generate_series(1, 3) AS g', maxRows: 3 });
    expect(answer).toMatchObject({ command: 'SELECT', rowCount: 3 });
    expect(answer).not.toHaveProperty('truncated');
  });
});

describe('an NDJSON error line', () => {
  /** Keys and kinds of an error line, with the values that differ between failures left out. */
  const shapeOf = (line: Json | undefined) => ({
    error: typeof line?.error.error,
    cause: typeof line?.error.cause,
    causeMessage: typeof line?.error.cause?.message,
    code: typeof line?.error.code,
  });
  const ERROR_SHAPE = { error: 'string', cause: 'object', causeMessage: 'string', code: 'string' };
  const errorLine = (lines: Json[]) => lines.find((line) => 'error' in line);

  it('has one shape for one statement and for several', async () => {
    const failing = 'SELECT 1 / (3 - g) AS x FROM generate_series(1, 5) g';
    const one = errorLine(await ndjson({ sql: failing }));
    const several = errorLine(await ndjson({ sql: `SELECT 1 AS a; ${failing}` }));
    expect(shapeOf(one)).toEqual(ERROR_SHAPE);
    expect(shapeOf(several)).toEqual(ERROR_SHAPE);
    expect(one?.error).toMatchObject({
      error: 'division by zero',
      cause: { code: '22012', statementIndex: 0 },
      sqlState: '22012',
    });
  });

  it('has the same shape when the statement was cancelled', async () => {
    const requestId = `result-shapes-${process.pid}-${Date.now()}`;
    // Rows stream at once; the last one waits.
    const response = await post(
      {
        sql: 'SELECT g, CASE WHEN g = 50000 THEN pg_sleep(30) END AS late FROM generate_series(1, 50000) g',
      },
      'application/x-ndjson',
      { 'x-request-id': requestId },
    );
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('{"row"')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const cancel = await fetch(`${url}/api/requests/${requestId}/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(target()),
    });
    expect(cancel.status).toBe(200);
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const line = errorLine(parseLines(text));
    expect(shapeOf(line)).toEqual(ERROR_SHAPE);
    expect(line?.error).toMatchObject({
      code: 'REQUEST_CANCELLED',
      cancelled: true,
      cause: { code: '57014' },
    });
    expect(parseLines(text).at(-1)).toHaveProperty('done');
  }, 30_000);
});
