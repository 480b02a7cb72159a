/**
 * Streamed answers of POST /api/query (docs/decisions.md 10.22), against sqlgate as a child
 * process and a real PostgreSQL: NDJSON for every strategy, CSV, failures before and after the
 * first byte, no row cap, a cut stream, a slow reader, and a client that goes away.
 */
import net from 'node:net';
import { streamFormatOf } from '../src/stream-formats';
import { eventually } from '@sqlgate/testing';
import { startSqlgateProcess, type SqlgateProcess } from './sqlgate-process';
import { sql, target } from './support';

let sqlgate: SqlgateProcess;

beforeAll(async () => {
  sqlgate = await startSqlgateProcess({ LOG_LEVEL: 'info' });
  await sql('DROP TABLE IF EXISTS stream_t; CREATE TABLE stream_t (id int PRIMARY KEY, v text)');
}, 30_000);
afterAll(async () => {
  await sqlgate?.stop();
  await sql('DROP TABLE IF EXISTS stream_t');
});

function post(body: Record<string, unknown>, accept: string, signal?: AbortSignal) {
  return fetch(`${sqlgate.url}/api/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept },
    body: JSON.stringify(target(body)),
    ...(signal ? { signal } : {}),
  });
}

type Line = Record<string, unknown>;

/** The NDJSON lines of a whole response. */
async function ndjson(body: Record<string, unknown>): Promise<{ status: number; lines: Line[] }> {
  const response = await post(body, 'application/x-ndjson');
  const text = await response.text();
  if (response.status !== 200) return { status: response.status, lines: [JSON.parse(text)] };
  expect(response.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
  const lines = text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Line);
  return { status: response.status, lines };
}

const kinds = (lines: Line[]) => lines.map((line) => Object.keys(line)[0]);

describe('NDJSON', () => {
  it('streams one statement: header, rows, trailer, done', async () => {
    const { status, lines } = await ndjson({ sql: 'SELECT g AS n FROM generate_series(1, 3) g' });
    expect(status).toBe(200);
    expect(kinds(lines)).toEqual(['statement', 'row', 'row', 'row', 'end', 'done']);
    expect(lines[0]).toMatchObject({
      statement: { index: 0, fields: [{ name: 'n', dataTypeName: 'int4' }] },
    });
    expect(lines.slice(1, 4)).toEqual([{ row: { n: 1 } }, { row: { n: 2 } }, { row: { n: 3 } }]);
    expect(lines[4]).toMatchObject({ end: { index: 0, command: 'SELECT', rowCount: 3 } });
    expect(lines[5]).toMatchObject({ done: { totalExecutionTime: expect.any(Number) } });
  });

  it('gives the same values as the JSON answer, in array mode too', async () => {
    const query = {
      sql: 'SELECT 1::int8 AS big, \'{"a": 1.10}\'::jsonb AS j, NULL::text AS t, -0::float8 AS z',
      rowMode: 'array',
    };
    const buffered = (await (await post(query, 'application/json')).json()) as { rows: unknown[] };
    const { lines } = await ndjson(query);
    expect(lines.filter((line) => 'row' in line).map((line) => line.row)).toEqual(buffered.rows);
  });

  it('keeps the rows of several reads together, in statement order', async () => {
    const { lines } = await ndjson({
      sql: 'SELECT g AS a FROM generate_series(1, 300) g; SELECT 2 AS b; SELECT 3 AS c',
    });
    const headers = lines.filter((line) => 'statement' in line);
    expect(headers.map((line) => (line.statement as { index: number }).index)).toEqual([0, 1, 2]);
    const firstEnd = kinds(lines).indexOf('end');
    expect(kinds(lines).slice(1, firstEnd)).toEqual(Array(300).fill('row'));
    expect(lines.at(-1)).toHaveProperty('done');
  });

  it('runs writes in one transaction and commits them', async () => {
    const { lines } = await ndjson({
      sql: "INSERT INTO stream_t VALUES (1, 'a'), (2, 'b'); SELECT id, v FROM stream_t ORDER BY id",
    });
    expect(kinds(lines)).toEqual(['statement', 'end', 'statement', 'row', 'row', 'end', 'done']);
    expect(lines[1]).toMatchObject({ end: { command: 'INSERT', rowCount: 2 } });
    expect(lines.at(-1)).toMatchObject({ done: { transactionUsed: true } });
    expect(await sql('SELECT count(*)::int AS n FROM stream_t')).toEqual([{ n: 2 }]);
  });

  it('runs a caller-managed script as written', async () => {
    const { lines } = await ndjson({
      sql: "BEGIN; INSERT INTO stream_t VALUES (3, 'c'); COMMIT; SELECT count(*)::int AS n FROM stream_t",
    });
    expect(lines.filter((line) => 'row' in line)).toEqual([{ row: { n: 3 } }]);
    expect(lines.at(-1)).toMatchObject({ done: { transactionUsed: false } });
  });

  it('reports a failure after the first byte in-band, then done; nothing was committed', async () => {
    const { status, lines } = await ndjson({
      sql: "INSERT INTO stream_t VALUES (10, 'x'); SELECT 1/0",
    });
    expect(status).toBe(200);
    expect(kinds(lines)).toEqual(['statement', 'end', 'error', 'done']);
    expect(lines[2]).toMatchObject({
      error: {
        failedStatementIndex: 1,
        code: 'DATABASE_ERROR',
        sqlState: '22012',
        cause: { code: '22012' },
      },
    });
    expect(lines[3]).toMatchObject({ done: { rolledBack: true } });
    expect(await sql('SELECT count(*)::int AS n FROM stream_t WHERE id = 10')).toEqual([{ n: 0 }]);
  });

  it('answers a failure before anything was streamed as JSON with its status', async () => {
    const response = await post(
      { sql: 'SELECT * FROM stream_no_such_table' },
      'application/x-ndjson',
    );
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toMatchObject({ error: { code: '42P01' } });
    const missing = await post({ sql: '' }, 'application/x-ndjson');
    expect(missing.status).toBe(400);
  });

  it('has no row cap unless the request names maxRows', async () => {
    const all = await ndjson({ sql: 'SELECT g FROM generate_series(1, 25000) g' });
    expect(all.lines.filter((line) => 'row' in line)).toHaveLength(25000);
    expect(all.lines.at(-2)).toMatchObject({ end: { rowCount: 25000 } });
    const capped = await ndjson({ sql: 'SELECT g FROM generate_series(1, 25000) g', maxRows: 5 });
    expect(capped.lines.filter((line) => 'row' in line)).toHaveLength(5);
    expect(capped.lines.at(-2)).toMatchObject({ end: { truncated: true } });
  });

  it('is refused to a page of another origin, as every POST is', async () => {
    const response = await fetch(`${sqlgate.url}/api/query`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/x-ndjson',
        origin: 'https://evil.example',
      },
      body: JSON.stringify(target({ sql: 'SELECT 1' })),
    });
    expect(response.status).toBe(403);
  });
});

describe('CSV', () => {
  it('writes RFC 4180 with a header row; NULL is empty, the empty string is ""', async () => {
    const response = await post(
      {
        sql: `SELECT g, CASE g WHEN 1 THEN 'a,"b' WHEN 2 THEN NULL WHEN 3 THEN '' ELSE E'x\\ny' END AS t, true AS b
              FROM generate_series(1, 4) g`,
      },
      'text/csv',
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(await response.text()).toBe('g,t,b\r\n1,"a,""b",t\r\n2,,t\r\n3,"",t\r\n4,"x\ny",t\r\n');
  });

  it('refuses more than one statement with 400', async () => {
    const response = await post({ sql: 'SELECT 1; SELECT 2' }, 'text/csv');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: expect.stringMatching(/one statement/) });
  });
});

describe('streamed answers under a hostile reading', () => {
  it('keeps a json value with line breaks on its row line', async () => {
    const { lines } = await ndjson({ sql: 'SELECT E\'{"a":\n 1,\r\n"b": [2]}\'::json AS j' });
    expect(lines.filter((line) => 'row' in line)).toEqual([{ row: { j: { a: 1, b: [2] } } }]);
  });

  it('answers a first statement that fails before its first row as JSON with its status', async () => {
    const failing = { sql: 'SELECT 1 / (g - 1) AS n FROM generate_series(1, 3) g' };
    for (const accept of ['text/csv', 'application/x-ndjson']) {
      const response = await post(failing, accept);
      expect({ accept, status: response.status }).toEqual({ accept, status: 400 });
      expect(await response.json()).toMatchObject({ error: { code: '22012' } });
    }
  });

  it('names the failed statement’s own error in the error line', async () => {
    const { lines } = await ndjson({ sql: 'SELECT 1 AS a; SELECT * FROM stream_no_such_table' });
    expect(lines.find((line) => 'error' in line)).toMatchObject({
      error: { failedStatementIndex: 1, sqlState: '42P01', cause: { code: '42P01' } },
    });
    expect(lines.at(-1)).toHaveProperty('done');
  });

  it('negotiates by q-value and order, JSON winning ties and wildcards', () => {
    expect(streamFormatOf('application/x-ndjson')).toBe('ndjson');
    expect(streamFormatOf('text/csv;header=present')).toBe('csv');
    expect(streamFormatOf('application/x-ndjson;q=0')).toBeUndefined();
    expect(streamFormatOf('application/json, application/x-ndjson;q=0.5')).toBeUndefined();
    expect(streamFormatOf('text/csv, application/x-ndjson')).toBe('csv');
    expect(streamFormatOf('application/json;q=0.1, TEXT/CSV')).toBe('csv');
    expect(streamFormatOf('*/*')).toBeUndefined();
    expect(streamFormatOf('garbage;;,q=x')).toBeUndefined();
  });

  it('cuts off a client that reads nothing past timeoutMs, and gives its connection back', async () => {
    const body = JSON.stringify(
      target({
        sql: "SELECT g, repeat('z', 300) FROM generate_series(1, 5000000) g",
        timeoutMs: 1000,
      }),
    );
    const url = new URL(sqlgate.url);
    const socket = net.connect(Number(url.port), url.hostname);
    socket.pause(); // never reads
    socket.write(
      `POST /api/query HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n` +
        `Accept: application/x-ndjson\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    try {
      await eventually(async () => expect(await sqlgate.activeConnections()).toBe(1));
      await eventually(async () => expect(await sqlgate.activeConnections()).toBe(0), {
        withinMs: 30_000,
      });
    } finally {
      socket.destroy();
    }
  }, 60_000);

  it('cuts the statement at a row larger than MAX_RESULT_BYTES, unread, and says so', async () => {
    const narrow = await startSqlgateProcess({ LOG_LEVEL: 'info', MAX_RESULT_BYTES: '1048576' });
    try {
      const response = await fetch(`${narrow.url}/api/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
        body: JSON.stringify(
          target({
            sql: "SELECT g, repeat('x', CASE g WHEN 2 THEN 2000000 ELSE 3 END) AS v FROM generate_series(1, 3) g",
          }),
        ),
      });
      const lines = (await response.text())
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Line);
      // The rows before it, never the ones after it: a hole would pass for the whole result.
      expect(lines.filter((line) => 'row' in line)).toEqual([{ row: { g: 1, v: 'xxx' } }]);
      expect(lines.find((line) => 'end' in line)).toMatchObject({
        end: { rowCount: 3, truncated: true, truncatedBy: 'bytes' },
      });
      // So does a JSON answer.
      const json = await fetch(`${narrow.url}/api/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(
          target({
            sql: "SELECT g, repeat('x', CASE g WHEN 2 THEN 2000000 ELSE 3 END) AS v FROM generate_series(1, 3) g",
          }),
        ),
      });
      expect(await json.json()).toMatchObject({
        rows: [{ g: 1, v: 'xxx' }],
        truncated: true,
        truncatedBy: 'bytes',
      });
      // CSV has no way to say a row is missing: the answer is cut instead of ending whole.
      const csv = await fetch(`${narrow.url}/api/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/csv' },
        body: JSON.stringify(
          target({
            sql: "SELECT g, repeat('x', CASE g WHEN 2 THEN 2000000 ELSE 3 END) AS v FROM generate_series(1, 3) g",
          }),
        ),
      });
      await expect(csv.text()).rejects.toThrow();
    } finally {
      await narrow.stop();
    }
  }, 30_000);
});

describe('COPY ... TO STDOUT', () => {
  it('stops a COPY at a line larger than MAX_RESULT_BYTES, naming the limit', async () => {
    const narrow = await startSqlgateProcess({ MAX_RESULT_BYTES: '1048576' });
    try {
      const answer = async (sql: string) => {
        const response = await fetch(`${narrow.url}/api/query`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(target({ sql })),
        });
        return { status: response.status, text: await response.text().catch(() => 'cut') };
      };
      // Its first line: refused before anything was sent.
      const first = await answer("COPY (SELECT repeat('x', 2000000)) TO STDOUT");
      expect(first.status).toBe(507);
      expect(JSON.parse(first.text)).toMatchObject({
        error: { code: 'RESULT_TOO_LARGE', message: expect.stringMatching(/MAX_RESULT_BYTES/) },
      });
      // A later line, once data was sent: the answer is cut, never ended as if whole.
      const later = await answer(
        "COPY (SELECT repeat('x', CASE g WHEN 200000 THEN 2000000 ELSE 3 END) FROM generate_series(1, 200000) g) TO STDOUT",
      );
      expect(later.text).toBe('cut');
    } finally {
      await narrow.stop();
    }
  }, 30_000);

  it('answers with the COPY data itself, text format as text/plain', async () => {
    const response = await post(
      { sql: "COPY (SELECT g, E'a\\tb' AS t, NULL AS n FROM generate_series(1, 2) g) TO STDOUT" },
      'application/json',
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await response.text()).toBe('1\ta\\tb\t\\N\n2\ta\\tb\t\\N\n');
  });

  it('answers CSV as text/csv and binary as application/octet-stream, whatever Accept says', async () => {
    const csv = await post(
      {
        sql: "COPY (SELECT g, 'a,b' AS t FROM generate_series(1, 2) g) TO STDOUT WITH (FORMAT csv, HEADER)",
      },
      'application/x-ndjson',
    );
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(await csv.text()).toBe('g,t\n1,"a,b"\n2,"a,b"\n');
    const binary = await post({ sql: 'COPY (SELECT 1) TO STDOUT (FORMAT binary)' }, '*/*');
    expect(binary.headers.get('content-type')).toBe('application/octet-stream');
    expect(Buffer.from(await binary.arrayBuffer()).subarray(0, 11)).toEqual(
      Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'),
    );
  });

  it('answers a COPY that fails before its data as JSON with its status', async () => {
    const response = await post({ sql: 'COPY stream_no_such_table TO STDOUT' }, '*/*');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: '42P01' } });
  });

  it('refuses a COPY TO STDOUT among other statements', async () => {
    const response = await post({ sql: 'SELECT 1; COPY (SELECT 1) TO STDOUT' }, '*/*');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: expect.stringMatching(/must be the only statement/),
      statementIndex: 1,
    });
  });

  it('holds a big COPY in PostgreSQL while the client reads slowly, and delivers all of it', async () => {
    const response = await post(
      { sql: 'COPY (SELECT g, md5(g::text) FROM generate_series(1, 2000000) g) TO STDOUT' },
      '*/*',
    );
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let lines = 0;
    const count = (chunk: Uint8Array | undefined) => {
      for (const byte of chunk ?? []) if (byte === 10) lines++;
    };
    count((await reader.read()).value);
    const before = sqlgate.rssBytes() ?? 0;
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((sqlgate.rssBytes() ?? 0) - before).toBeLessThan(64 * 1024 * 1024);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      count(value);
    }
    expect(lines).toBe(2000000);
  }, 120_000);
});

describe('a stream under stress', () => {
  const BIG = 'SELECT g, md5(g::text) FROM generate_series(1, 3000000) g';

  it('keeps memory flat while the client reads slowly, and still delivers every row', async () => {
    const response = await post({ sql: BIG, rowMode: 'array' }, 'application/x-ndjson');
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    const first = decoder.decode((await reader.read()).value, { stream: true });
    const before = sqlgate.rssBytes() ?? 0;
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const during = sqlgate.rssBytes() ?? 0;
    // Held by PostgreSQL and the kernel's buffers, not by sqlgate.
    expect(during - before).toBeLessThan(64 * 1024 * 1024);
    let newlines = first.split('\n').length - 1;
    let tail = first;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const text = decoder.decode(value, { stream: true });
      for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) newlines++;
      tail = (tail + text).slice(-200);
    }
    expect(tail).toMatch(/"done"/);
    expect(tail).toMatch(/"rowCount":3000000/);
    expect(newlines).toBeGreaterThan(3000000);
  }, 120_000);

  it('cancels the statement when the client goes away', async () => {
    const marker = `stream_cancel_${Date.now()}`;
    const controller = new AbortController();
    const response = await post(
      // A set-returning function in the select list streams; in FROM it would be materialised first.
      { sql: `SELECT generate_series(1, 100000000) AS ${marker}` },
      'application/x-ndjson',
      controller.signal,
    );
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    const running = `SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%${marker}%' AND query NOT LIKE '%pg_stat_activity%'`;
    expect(await sql(running)).toEqual([{ n: 1 }]);
    controller.abort();
    await eventually(async () => expect(await sql(running)).toEqual([{ n: 0 }]), {
      withinMs: 30_000,
    });
  }, 60_000);

  it("a request without its own X-Request-Id is cancelled by sqlgate's id once it streams (10.26)", async () => {
    const response = await post(
      { sql: 'SELECT 1 AS one; SELECT pg_sleep(30)' },
      'application/x-ndjson',
    );
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id') ?? '';
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    const cancel = await fetch(`${sqlgate.url}/api/requests/${requestId}/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(target()),
    });
    expect(cancel.status).toBe(200);
    expect(await cancel.json()).toEqual({ cancelled: true });
    // 57014: the sleep was cancelled, not waited out.
    const text = await response.text();
    expect(text).toMatch(/"one":1/);
    expect(text).toMatch(/57014/);
  }, 30_000);

  it('shows a cut stream: without its done line when sqlgate dies mid-stream', async () => {
    const victim = await startSqlgateProcess({ LOG_LEVEL: 'info' });
    try {
      const response = await fetch(`${victim.url}/api/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
        body: JSON.stringify(target({ sql: BIG })),
      });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      let text = new TextDecoder().decode((await reader.read()).value);
      process.kill(victim.pid, 'SIGKILL');
      const rest = await (async () => {
        let more = '';
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return more;
            more += new TextDecoder().decode(value);
          }
        } catch {
          return more; // the transfer was cut: chunked encoding never ended
        }
      })();
      text += rest;
      expect(text).not.toMatch(/"done"/);
    } finally {
      await victim.stop();
    }
  }, 30_000);
});
