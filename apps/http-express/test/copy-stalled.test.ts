/**
 * POST /api/copy when PostgreSQL takes none of the upload (docs/decisions.md 10.23): a COPY that
 * waits on a lock another connection holds reads no data, so the upload stops moving. It is
 * answered 408 after BODY_TIMEOUT_MS, logged as 408, loads nothing and holds no connection, as
 * docs/interface.md says. A real listening server and a real PostgreSQL.
 */
import http from 'node:http';
import type { Client } from 'pg';
import { startServer, type RunningServer } from '../src/server';
import { eventually } from '@sqlgate/testing';
import { captureLogs, directClient, sql, target } from './support';

const BODY_TIMEOUT_MS = 1000;
const logs = captureLogs('info');
let server: RunningServer;
let locker: Client;

beforeAll(async () => {
  await sql('DROP TABLE IF EXISTS copy_stalled_t; CREATE TABLE copy_stalled_t (id int, v text)');
  server = await startServer({
    port: 0,
    hostname: '127.0.0.1',
    bodyTimeoutMs: BODY_TIMEOUT_MS,
    logger: logs.logger,
  });
  locker = await directClient();
});
afterAll(async () => {
  await locker.end();
  await server.close();
  await sql('DROP TABLE IF EXISTS copy_stalled_t');
});

interface Answer {
  status: number;
  text: string;
  ms: number;
}

/** Starts an upload of `megabytes` of rows that it never ends; resolves with the answer. */
function uploadThatWaits(megabytes: number): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const client = http.request({
      host: '127.0.0.1',
      port: server.port,
      path: '/api/copy',
      method: 'POST',
      headers: {
        'content-type': 'multipart/form-data; boundary=XB',
        'x-request-id': 'stalled-upload',
      },
    });
    client.on('error', reject);
    client.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, text, ms: performance.now() - started }),
      );
    });
    const request = JSON.stringify(target({ sql: 'COPY copy_stalled_t FROM STDIN' }));
    client.write(
      `--XB\r\nContent-Disposition: form-data; name="request"\r\n\r\n${request}\r\n` +
        '--XB\r\nContent-Disposition: form-data; name="data"; filename="d.tsv"\r\n\r\n',
    );
    client.write(Buffer.alloc(megabytes * 1024 * 1024, '1\tx\n'));
  });
}

const copiesRunning = async (): Promise<number> =>
  (
    (await sql(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'COPY copy_stalled_t%' AND state <> 'idle'",
    )) as { n: number }[]
  )[0]?.n ?? 0;

it('answers 408 after BODY_TIMEOUT_MS, logs 408, and leaves no COPY waiting', async () => {
  await locker.query('BEGIN');
  await locker.query('LOCK TABLE copy_stalled_t IN ACCESS EXCLUSIVE MODE');
  try {
    const answer = await uploadThatWaits(32);
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.text)).toEqual({ error: `No data moved for ${BODY_TIMEOUT_MS} ms` });
    // Not the 5 s more it took a COPY that never failed to be given up (a reset at 15 s).
    expect(answer.ms).toBeLessThan(BODY_TIMEOUT_MS + 4000);
    const logged = logs.lines().filter((line) => line.reqId === 'stalled-upload');
    expect(logged).toEqual([expect.objectContaining({ path: '/api/copy', status: 408 })]);
    // The COPY waiting on the lock was cancelled: its pooled connection is free again while the
    // lock is still held.
    await eventually(async () => (await copiesRunning()) === 0);
  } finally {
    await locker.query('ROLLBACK');
  }
  expect(await sql('SELECT count(*)::int AS n FROM copy_stalled_t')).toEqual([{ n: 0 }]);
}, 30_000);
