/**
 * docs/decisions.md 10.27: a write whose cache invalidation the shared store (a real Redis) did
 * not confirm, because Redis is frozen (SIGSTOP) or down, is answered with a warning saying that
 * other instances may still serve what it changed, and the server logs it. Once Redis answers
 * again, the pending invalidation goes through and writes are answered without it.
 */
import { UNCONFIRMED_INVALIDATION_WARNING } from '@sqlgate/core';
import { startLocalRedis, type LocalRedis } from '@sqlgate/testing';
import { startServer, type RunningServer } from '../src/server';
import { captureLogs, sql, target } from './support';

const TABLE = 'invalidation_warning_rows';
const SHARED_SECRET = 'a shared secret of at least thirty-two characters';
const LOG_MESSAGE = 'cache invalidation not confirmed by the store';

let redis: LocalRedis;
let server: RunningServer;
const logs = captureLogs('warn');
let requests = 0;

interface Answer {
  requestId: string;
  status: number;
  body: { warnings?: string[]; cacheStatus?: string };
}

async function post(text: string): Promise<Answer> {
  const requestId = `invalidation-warning-${++requests}`;
  const response = await fetch(`${server.url}/api/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': requestId },
    body: JSON.stringify({ ...target(), sql: text, cache: true }),
  });
  return { requestId, status: response.status, body: (await response.json()) as Answer['body'] };
}

const write = () => post(`UPDATE ${TABLE} SET n = n + 1`);
const read = () => post(`SELECT n FROM ${TABLE}`);

/** Writes until one is answered without the warning: the store confirms invalidations again. */
async function untilConfirmed(): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const answer = await write();
    expect(answer.status).toBe(200);
    if (!answer.body.warnings) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the store never confirmed an invalidation again');
}

function loggedFor(requestId: string): Record<string, unknown>[] {
  return logs.lines().filter((line) => line.msg === LOG_MESSAGE && line.reqId === requestId);
}

beforeAll(async () => {
  redis = await startLocalRedis();
  await sql(
    `DROP TABLE IF EXISTS ${TABLE}; CREATE TABLE ${TABLE} (n int); INSERT INTO ${TABLE} VALUES (0)`,
  );
  server = await startServer({
    port: 0,
    hostname: '127.0.0.1',
    queryCacheRedisUrl: redis.url,
    queryCacheSecret: SHARED_SECRET,
    logger: logs.logger,
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await redis?.stop();
  await sql(`DROP TABLE IF EXISTS ${TABLE}`);
});

it('answers a write with no warning while Redis confirms its invalidation', async () => {
  await untilConfirmed();
  const answer = await write();
  expect(answer.status).toBe(200);
  expect(answer.body.warnings).toBeUndefined();
  expect(loggedFor(answer.requestId)).toEqual([]);
});

it('warns, and logs, when Redis is frozen during a write; a read says nothing of it', async () => {
  await untilConfirmed();
  await redis.freeze();
  let frozenWrite: Answer;
  let frozenRead: Answer;
  try {
    frozenWrite = await write();
    frozenRead = await read();
  } finally {
    await redis.thaw();
  }
  expect(frozenWrite.status).toBe(200);
  expect(frozenWrite.body.warnings).toEqual([UNCONFIRMED_INVALIDATION_WARNING]);
  expect(loggedFor(frozenWrite.requestId)).toEqual([
    expect.objectContaining({ level: 40, place: expect.any(String) }),
  ]);
  expect(frozenRead.status).toBe(200);
  expect(frozenRead.body.warnings).toBeUndefined();

  await untilConfirmed();
});

it('says so in the done line of a streamed write', async () => {
  await untilConfirmed();
  await redis.freeze();
  let text: string;
  try {
    const response = await fetch(`${server.url}/api/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
      body: JSON.stringify({ ...target(), sql: `UPDATE ${TABLE} SET n = n + 1 RETURNING n` }),
    });
    expect(response.status).toBe(200);
    text = await response.text();
  } finally {
    await redis.thaw();
  }
  const lines = text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(lines.at(-1)).toMatchObject({ done: { warnings: [UNCONFIRMED_INVALIDATION_WARNING] } });

  await untilConfirmed();
});

it('warns when Redis is down during a write, and stops once it is back', async () => {
  await untilConfirmed();
  await redis.kill();
  let downWrite: Answer;
  try {
    downWrite = await write();
  } finally {
    await redis.restart();
  }
  expect(downWrite.status).toBe(200);
  expect(downWrite.body.warnings).toEqual([UNCONFIRMED_INVALIDATION_WARNING]);
  expect(loggedFor(downWrite.requestId)).toHaveLength(1);

  await untilConfirmed();
}, 60_000);
