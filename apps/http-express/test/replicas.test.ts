/**
 * Replicas of a named connection (docs/decisions.md 13) against a real primary and a real streaming
 * replica: reads go to the replica, writes to the primary with a consistency token, a token-bearing
 * read sees its write, a stopped replica is left out and used again once it is back.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import pino from 'pino';
import { sqlgate } from '@sqlgate/client';
import { consistencyTokenOf } from '@sqlgate/core';
import {
  eventually,
  startLocalCluster,
  startLocalReplica,
  type LocalCluster,
  type LocalReplica,
} from '@sqlgate/testing';
import { parseAccessConfig } from '../src/access/config-file';
import { startServer, type RunningServer } from '../src/server';
import { rawExchange, rawRequest } from './raw-http';
import { startSqlgateProcess } from './sqlgate-process';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const KEY = 'replica-key-0123456789abcdef';
const TABLE = 'sg_replica_items';

let primary: LocalCluster;
let replica: LocalReplica;
let server: RunningServer;
let access: ReturnType<typeof parseAccessConfig>;

const urlOf = (where: { port: number; user: string; password: string; database: string }) =>
  `postgresql://${encodeURIComponent(where.user)}:${encodeURIComponent(where.password)}@127.0.0.1:${where.port}/${where.database}?sslmode=disable`;

interface Answer {
  status: number;
  body: Json;
  token: string | null;
  timing: string | null;
}

async function query(connection: string, sql: string, token?: string | null): Promise<Answer> {
  const response = await fetch(`${server.url}/api/query`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${KEY}`,
      ...(token ? { 'sqlgate-consistency-token': token } : {}),
    },
    body: JSON.stringify({ connection, sql }),
  });
  return {
    status: response.status,
    body: (await response.json()) as Json,
    token: response.headers.get('sqlgate-consistency-token'),
    timing: response.headers.get('server-timing'),
  };
}

interface StreamedAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  trailers: Record<string, string | undefined>;
}

/** A streamed answer read with node:http, which gives HTTP trailers (fetch does not). */
function streamed(
  path: string,
  accept: string,
  body: Json,
  headers: Record<string, string> = {},
): Promise<StreamedAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${server.url}${path}`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${KEY}`,
          accept,
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            trailers: res.trailers,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const ndjsonDone = (text: string): Json =>
  (JSON.parse(text.trim().split('\n').at(-1) as string) as { done: Json }).done;

beforeAll(async () => {
  primary = await startLocalCluster({ tls: false, replication: true });
  replica = await startLocalReplica(primary);
  access = parseAccessConfig(
    {
      connections: {
        // A generous bound: a paused replica's last replayed transaction grows old.
        app: { url: urlOf(primary), replicas: [urlOf(replica)], maxReplicaLagMs: 600_000 },
        strict: { url: urlOf(primary), replicas: [urlOf(replica)], maxReplicaLagMs: 1 },
        plain: { url: urlOf(primary) },
      },
      keys: [{ id: 'app', secret: KEY, connections: ['app', 'strict', 'plain'] }],
    },
    {},
  );
  server = await startServer({
    port: 0,
    hostname: '127.0.0.1',
    access,
    consistencyWaitMs: 300,
    logger: pino({ level: 'silent' }),
  });
  await query('app', `CREATE TABLE ${TABLE} (id int)`);
  // The first lag checks have found the replica, and it has the table.
  await eventually(async () => {
    const answer = await query('app', `SELECT count(*)::int AS n FROM ${TABLE}`);
    expect(answer.body).toMatchObject({ servedBy: 'replica', rows: [{ n: 0 }] });
  });
}, 120_000);

afterAll(async () => {
  await server?.close();
  await replica?.remove();
  await primary?.stop();
});

test('a read runs on the replica and says so in its body and its Server-Timing', async () => {
  const answer = await query(
    'app',
    'SELECT pg_is_in_recovery() AS standby, now() IS NOT NULL AS t',
  );
  expect(answer.status).toBe(200);
  expect(answer.body).toMatchObject({ rows: [{ standby: true, t: true }], servedBy: 'replica' });
  expect(answer.timing).toMatch(
    /^pool;dur=[\d.]+, exec;dur=[\d.]+, ser;dur=[\d.]+, served;desc=replica$/,
  );
  expect(answer.token).toBe(null);
});

test('writes, and reads that might write, run on the primary; a write carries a token', async () => {
  const write = await query('app', `INSERT INTO ${TABLE} VALUES (0)`);
  expect(write.body).toMatchObject({ servedBy: 'primary', rowCount: 1 });
  expect(write.token).toMatch(/^[A-Za-z0-9_-]+$/);
  const sequence = await query(
    'app',
    'SELECT pg_is_in_recovery() AS standby, txid_current() > 0 AS x',
  );
  expect(sequence.body).toMatchObject({ rows: [{ standby: false }], servedBy: 'primary' });
});

test('a connection without replicas answers as before', async () => {
  const answer = await query('plain', 'SELECT 1 AS one');
  expect(answer.body).not.toHaveProperty('servedBy');
  expect(answer.timing).not.toMatch(/served/);
  const write = await query('plain', `INSERT INTO ${TABLE} VALUES (-1)`);
  expect(write.token).toBe(null);
});

test('read-your-writes: with replay paused, a token-bearing read sees its write, one without is served by the replica; after resume the replica serves both', async () => {
  await replica.pauseReplay();
  try {
    const write = await query('app', `INSERT INTO ${TABLE} VALUES (1)`);
    expect(write.status).toBe(200);
    const token = write.token;
    expect(token).not.toBe(null);
    const withToken = await query(
      'app',
      `SELECT count(*)::int AS n FROM ${TABLE} WHERE id = 1`,
      token,
    );
    expect(withToken.body).toMatchObject({ rows: [{ n: 1 }], servedBy: 'primary' });
    const withoutToken = await query(
      'app',
      `SELECT pg_is_in_recovery() AS standby, (SELECT count(*)::int FROM ${TABLE} WHERE id = 1) AS n`,
    );
    expect(withoutToken.body).toMatchObject({
      rows: [{ standby: true, n: 0 }],
      servedBy: 'replica',
    });
    // A replica further behind than its connection's bound is left out once a check sees it.
    await eventually(async () => {
      const strict = await query('strict', 'SELECT pg_is_in_recovery() AS standby');
      expect(strict.body).toMatchObject({ rows: [{ standby: false }], servedBy: 'primary' });
    });
    await replica.resumeReplay();
    await eventually(async () => {
      const caughtUp = await query(
        'app',
        `SELECT count(*)::int AS n FROM ${TABLE} WHERE id = 1`,
        token,
      );
      expect(caughtUp.body).toMatchObject({ rows: [{ n: 1 }], servedBy: 'replica' });
    });
  } finally {
    await replica.resumeReplay();
  }
});

test('@sqlgate/client carries the last token: with replay paused, its read after its write sees the write; another client reads the replica', async () => {
  const writer = sqlgate({ url: server.url, connection: 'app', authToken: KEY });
  const other = sqlgate({ url: server.url, connection: 'app', authToken: KEY });
  await replica.pauseReplay();
  try {
    await writer.query(`INSERT INTO ${TABLE} VALUES (2)`);
    const seen = await writer.query(`SELECT count(*)::int AS n FROM ${TABLE} WHERE id = 2`);
    expect(seen).toEqual([{ n: 1 }]);
    const unseen = await other.query(
      `SELECT pg_is_in_recovery() AS standby, (SELECT count(*)::int FROM ${TABLE} WHERE id = 2) AS n`,
    );
    expect(unseen).toEqual([{ standby: true, n: 0 }]);
  } finally {
    await replica.resumeReplay();
  }
});

test('metrics count reads by where they ran, consistency waits by outcome, and the lag seen', async () => {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  expect(text).toMatch(/sqlgate_replica_reads_total\{connection="app",served_by="replica"\} [1-9]/);
  expect(text).toMatch(
    /sqlgate_consistency_waits_total\{connection="app",outcome="primary"\} [1-9]/,
  );
  expect(text).toMatch(/sqlgate_replica_lag_seconds\{connection="app",replica="0"\} /);
  expect(text).not.toContain(String(replica.port));
});

test('reads a standby refuses run on the primary: an unlogged table, and a view over a writing function, whose write carries a token', async () => {
  // As the primary's owner: a key's requests may not create functions (docs/decisions.md 12).
  const owner = new Client({ connectionString: urlOf(primary) });
  await owner.connect();
  try {
    await owner.query(`CREATE UNLOGGED TABLE sg_unlogged (n int);
      INSERT INTO sg_unlogged VALUES (1);
      CREATE FUNCTION sg_bump() RETURNS int LANGUAGE sql AS 'INSERT INTO ${TABLE} VALUES (10) RETURNING 1';
      CREATE VIEW sg_bumping AS SELECT sg_bump() AS n;`);
  } finally {
    await owner.end();
  }
  // The replica has the view: a plain read of it would reach the standby.
  await eventually(async () => {
    const seen = await query(
      'app',
      "SELECT count(*)::int AS n FROM pg_views WHERE viewname = 'sg_bumping'",
    );
    expect(seen.body).toMatchObject({ rows: [{ n: 1 }], servedBy: 'replica' });
  });
  const unlogged = await query('app', 'SELECT n FROM sg_unlogged');
  expect(unlogged.status).toBe(200);
  expect(unlogged.body).toMatchObject({ rows: [{ n: 1 }], servedBy: 'primary' });
  expect(unlogged.token).toBe(null);
  await replica.pauseReplay();
  try {
    const bumped = await query('app', 'SELECT n FROM sg_bumping');
    expect(bumped.status).toBe(200);
    expect(bumped.body).toMatchObject({ rows: [{ n: 1 }], servedBy: 'primary' });
    expect(bumped.token).toMatch(/^[A-Za-z0-9_-]+$/);
    const seen = await query(
      'app',
      `SELECT count(*)::int AS n FROM ${TABLE} WHERE id = 10`,
      bumped.token,
    );
    expect(seen.body).toMatchObject({ rows: [{ n: 1 }] });
  } finally {
    await replica.resumeReplay();
  }
});

test("a consistency wait ends for a token the primary never reached, at the request's timeoutMs, and at its cancel", async () => {
  // Waits of ten minutes: a wait that does not end fails the test by its timeout.
  const patient = await startServer({
    port: 0,
    hostname: '127.0.0.1',
    access,
    consistencyWaitMs: 600_000,
    logger: pino({ level: 'silent' }),
  });
  const ask = async (body: Json, headers: Record<string, string>) => {
    const response = await fetch(`${patient.url}/api/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, ...headers },
      body: JSON.stringify({ connection: 'app', ...body }),
    });
    return { status: response.status, body: (await response.json()) as Json };
  };
  const sql = 'SELECT pg_is_in_recovery() AS standby';
  try {
    const forged = consistencyTokenOf('FFFFFFFF/0');
    expect(await ask({ sql }, { 'sqlgate-consistency-token': forged })).toMatchObject({
      status: 200,
      body: { rows: [{ standby: false }], servedBy: 'primary' },
    });
    await replica.pauseReplay();
    const write = await query('app', `INSERT INTO ${TABLE} VALUES (11)`);
    const token = write.token as string;
    expect(
      await ask({ sql, timeoutMs: 2000 }, { 'sqlgate-consistency-token': token }),
    ).toMatchObject({ status: 200, body: { rows: [{ standby: false }], servedBy: 'primary' } });
    // The wait spent half the request's time: the statement after it has what is left, not all of
    // it (0.6 s would fit in 800 ms; it does not fit in what is left after waiting 400).
    expect(
      await ask(
        { sql: 'SELECT pg_sleep(0.6)', timeoutMs: 800 },
        { 'sqlgate-consistency-token': token },
      ),
    ).toMatchObject({ status: 504 });
    const waiting = ask({ sql }, { 'sqlgate-consistency-token': token, 'x-request-id': 'waits-1' });
    await eventually(async () => {
      const cancel = await fetch(`${patient.url}/api/requests/waits-1/cancel`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
        body: JSON.stringify({ connection: 'app' }),
      });
      expect(cancel.status).toBe(200);
    });
    expect(await waiting).toMatchObject({ status: 409, body: { code: 'REQUEST_CANCELLED' } });
  } finally {
    await replica.resumeReplay();
    await patient.close();
  }
});

test('a streamed read says where it ran in its head and its done line', async () => {
  for (const accept of ['application/x-ndjson', 'text/csv']) {
    const answer = await streamed('/api/query', accept, {
      connection: 'app',
      sql: 'SELECT pg_is_in_recovery() AS standby',
    });
    expect(answer.status).toBe(200);
    expect(answer.headers['server-timing']).toBe('served;desc=replica');
    expect(answer.headers.trailer).toBeUndefined();
    expect(answer.trailers).toEqual({});
    if (accept === 'text/csv') expect(answer.text).toBe('standby\r\nt\r\n');
    else expect(ndjsonDone(answer.text)).toMatchObject({ servedBy: 'replica' });
  }
});

test('a streamed write carries its token after its rows: in the done line and as a trailer; it reads its write back with replay paused', async () => {
  await replica.pauseReplay();
  try {
    const ndjson = await streamed('/api/query', 'application/x-ndjson', {
      connection: 'app',
      sql: `INSERT INTO ${TABLE} VALUES (3) RETURNING id`,
    });
    expect(ndjson.headers['server-timing']).toBe('served;desc=primary');
    expect(ndjson.headers.trailer).toBe('Sqlgate-Consistency-Token');
    const done = ndjsonDone(ndjson.text);
    expect(done).toMatchObject({ servedBy: 'primary', consistencyToken: expect.any(String) });
    expect(ndjson.trailers['sqlgate-consistency-token']).toBe(done.consistencyToken);
    const csv = await streamed('/api/query', 'text/csv', {
      connection: 'app',
      sql: `INSERT INTO ${TABLE} VALUES (4) RETURNING id`,
    });
    expect(csv.text).toBe('id\r\n4\r\n');
    const token = csv.trailers['sqlgate-consistency-token'];
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    const seen = await query(
      'app',
      `SELECT count(*)::int AS n FROM ${TABLE} WHERE id IN (3, 4)`,
      token,
    );
    expect(seen.body).toMatchObject({ rows: [{ n: 2 }], servedBy: 'primary' });
    // The client keeps the token of a write it streamed.
    const client = sqlgate({ url: server.url, connection: 'app', authToken: KEY });
    const returned: unknown[] = [];
    for await (const row of client.stream(`INSERT INTO ${TABLE} VALUES (5) RETURNING id`)) {
      returned.push(row);
    }
    expect(returned).toEqual([{ id: 5 }]);
    expect(await client.query(`SELECT count(*)::int AS n FROM ${TABLE} WHERE id = 5`)).toEqual([
      { n: 1 },
    ]);
  } finally {
    await replica.resumeReplay();
  }
});

test('an HTTP/1.0 client streaming a write gets its rows and the token in the done line, without trailers, which HTTP/1.0 cannot carry', async () => {
  const port = new URL(server.url).port;
  for (const accept of ['application/x-ndjson', 'text/csv']) {
    const body = JSON.stringify({
      connection: 'app',
      sql: `INSERT INTO ${TABLE} VALUES (8) RETURNING id`,
    });
    const answer = await rawExchange(
      Number(port),
      `POST /api/query HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Authorization: Bearer ${KEY}\r\nAccept: ${accept}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    const headEnd = answer.indexOf('\r\n\r\n');
    const head = answer.slice(0, headEnd);
    const text = answer.slice(headEnd + 4);
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(head).not.toMatch(/^trailer:/im);
    if (accept === 'text/csv') expect(text).toBe('id\r\n8\r\n');
    else expect(ndjsonDone(text)).toMatchObject({ consistencyToken: expect.any(String) });
  }
  // The service is still there.
  expect((await query('app', 'SELECT 1 AS one')).status).toBe(200);
});

test('a session on a connection with replicas runs on the primary; a write and a COMMIT carry a token', async () => {
  const opened = await fetch(`${server.url}/api/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    body: JSON.stringify({ connection: 'app' }),
  });
  expect(opened.status).toBe(201);
  const { sessionId } = (await opened.json()) as { sessionId: string };
  const inSession = async (sql: string) => {
    const response = await fetch(`${server.url}/api/sessions/${sessionId}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sql }),
    });
    return {
      body: (await response.json()) as Json,
      token: response.headers.get('sqlgate-consistency-token'),
    };
  };
  try {
    const read = await inSession('SELECT pg_is_in_recovery() AS standby');
    expect(read.body).toMatchObject({ rows: [{ standby: false }], servedBy: 'primary' });
    expect(read.token).toBe(null);
    expect((await inSession('BEGIN')).token).toBe(null);
    expect((await inSession(`INSERT INTO ${TABLE} VALUES (6)`)).token).not.toBe(null);
    await replica.pauseReplay();
    const commit = await inSession('COMMIT');
    expect(commit.body).toMatchObject({ servedBy: 'primary' });
    expect(commit.token).toMatch(/^[A-Za-z0-9_-]+$/);
    const seen = await query(
      'app',
      `SELECT count(*)::int AS n FROM ${TABLE} WHERE id = 6`,
      commit.token,
    );
    expect(seen.body).toMatchObject({ rows: [{ n: 1 }], servedBy: 'primary' });
  } finally {
    await replica.resumeReplay();
    await fetch(`${server.url}/api/sessions/${sessionId}`, { method: 'DELETE' });
  }
});

test('a read that may fill the result cache runs on the primary: what the cache keeps is never behind a write', async () => {
  const sql = `SELECT count(*)::int AS n FROM ${TABLE} WHERE id = 7`;
  const cached = async () => {
    const response = await fetch(`${server.url}/api/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ connection: 'app', sql, cache: true }),
    });
    return (await response.json()) as Json;
  };
  expect(await cached()).toMatchObject({ rows: [{ n: 0 }], servedBy: 'primary' });
  await replica.pauseReplay();
  try {
    // The write invalidates the entry; the replica, paused, has not replayed it.
    expect((await query('app', `INSERT INTO ${TABLE} VALUES (7)`)).status).toBe(200);
    expect(await cached()).toMatchObject({ rows: [{ n: 1 }], servedBy: 'primary' });
    expect(await cached()).toMatchObject({ rows: [{ n: 1 }], servedBy: 'primary' });
    // Without the cache, the same read goes to the replica, which has not replayed it yet.
    expect((await query('app', sql)).body).toMatchObject({ rows: [{ n: 0 }], servedBy: 'replica' });
  } finally {
    await replica.resumeReplay();
  }
});

test('with WORKERS=2, each worker routes to the replica and /metrics shows their routing and the lag', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sqlgate-replicas-'));
  const configFile = path.join(dir, 'config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      connections: { app: { url: urlOf(primary), replicas: [urlOf(replica)] } },
      keys: [{ id: 'app', secret: KEY, connections: ['app'] }],
    }),
  );
  const workers = await startSqlgateProcess({ WORKERS: '2', CONFIG_FILE: configFile });
  try {
    const read = async () => {
      const response = await fetch(`${workers.url}/api/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
        body: JSON.stringify({ connection: 'app', sql: 'SELECT pg_is_in_recovery() AS standby' }),
      });
      return (await response.json()) as Json;
    };
    await eventually(async () => {
      expect(await read()).toMatchObject({ rows: [{ standby: true }], servedBy: 'replica' });
    });
    await eventually(async () => {
      const text = await (await fetch(`${workers.url}/metrics`)).text();
      expect(text).toMatch(
        /sqlgate_replica_reads_total\{connection="app",served_by="replica"\} [1-9]/,
      );
      expect(text).toMatch(/sqlgate_replica_lag_seconds\{connection="app",replica="0"\} /);
    });
    // A session's writes carry their token whichever worker the request reaches (each request on
    // a connection of its own: the workers take connections in turn).
    const opened = await fetch(`${workers.url}/api/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ connection: 'app' }),
    });
    const { sessionId } = (await opened.json()) as { sessionId: string };
    for (let i = 0; i < 4; i += 1) {
      const write = await rawRequest({
        port: Number(new URL(workers.url).port),
        method: 'POST',
        path: `/api/sessions/${sessionId}/query`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sql: `INSERT INTO ${TABLE} VALUES (12)` }),
      });
      expect(write.status).toBe(200);
      expect(write.headers['sqlgate-consistency-token']).toMatch(/^[A-Za-z0-9_-]+$/);
    }
  } finally {
    await workers.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

test('a stopped replica: reads keep answering from the primary; back, it serves again', async () => {
  await replica.stop();
  // A streamed read whose replica stopped, before any row went out, runs again on the primary.
  const stream = await streamed('/api/query', 'application/x-ndjson', {
    connection: 'app',
    sql: 'SELECT pg_is_in_recovery() AS standby',
  });
  expect(stream.status).toBe(200);
  expect(stream.headers['server-timing']).toBe('served;desc=primary');
  expect(stream.text).toContain('{"row":{"standby":false}}');
  for (let i = 0; i < 5; i += 1) {
    const answer = await query('app', 'SELECT pg_is_in_recovery() AS standby');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ rows: [{ standby: false }], servedBy: 'primary' });
  }
  await replica.start();
  await eventually(async () => {
    const answer = await query('app', 'SELECT pg_is_in_recovery() AS standby');
    expect(answer.body).toMatchObject({ rows: [{ standby: true }], servedBy: 'replica' });
  });
}, 120_000);
