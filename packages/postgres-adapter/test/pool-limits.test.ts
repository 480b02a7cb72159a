/**
 * docs/decisions.md 6 limits: clients per pool, idle timeout, pools kept at once (least recently
 * used idle pool closed first, never one past the bound: 10.43), and pools unused for
 * unusedPoolTtlMs closed and removed.
 */
import { randomBytes } from 'node:crypto';
import type { Connection, ConnectionTarget } from '@sqlgate/core';
import { ConnectionError, orThrow } from '@sqlgate/core';
import { Client } from 'pg';
import { database, failureOf, testTarget } from './support';
import { createPostgresConnections, type PostgresConnections } from '../src';

const rows = { rowMode: 'object' as const, maxRows: 10 };
const USERS = 150;
const prefix = `pool_limit_${randomBytes(3).toString('hex')}_`;
const password = 'pool-limit-password';

const target: ConnectionTarget = testTarget('disable');
/** The target as the i-th of many users: one pool each. */
const asUser = (i: number): ConnectionTarget => ({ ...target, user: `${prefix}${i}`, password });
const poolIdOf = (t: ConnectionTarget) => `${t.host}:${t.port}:${t.user}:${t.database}`;

async function direct(sqlText: string): Promise<void> {
  const client = new Client({ ...database, ssl: false });
  await client.connect();
  try {
    await client.query(sqlText);
  } finally {
    await client.end();
  }
}

async function runOnce(connections: PostgresConnections, t: ConnectionTarget): Promise<void> {
  const connection = await orThrow(connections.acquire(t));
  try {
    await orThrow(connection.run('SELECT 1', rows));
  } finally {
    connection.release();
  }
}

async function until(condition: () => boolean, withinMs: number): Promise<boolean> {
  for (let waited = 0; !condition() && waited < withinMs; waited += 10)
    await new Promise((r) => setTimeout(r, 10));
  return condition();
}

let connections: PostgresConnections;
afterEach(() => connections?.close());

beforeAll(async () => {
  await direct(`DO $$ BEGIN
    FOR i IN 0..${USERS - 1} LOOP
      EXECUTE format('CREATE ROLE %I LOGIN PASSWORD %L', '${prefix}' || i, '${password}');
    END LOOP;
  END $$`);
});
afterAll(async () => {
  await direct(`DO $$ BEGIN
    FOR i IN 0..${USERS - 1} LOOP EXECUTE format('DROP ROLE %I', '${prefix}' || i); END LOOP;
  END $$`);
});

it('never holds more than POOL_TARGETS_MAX pools across 150 targets; the least recently used go first', async () => {
  // Idle clients close quickly, so 100 pools do not hold 100 server connections for long.
  connections = createPostgresConnections({ maxPools: 100, idleTimeoutMs: 100 });
  let most = 0;
  for (let i = 0; i < USERS; i++) {
    await runOnce(connections, asUser(i));
    // The first pool is used again and again: it is never the least recently used one.
    if (i % 10 === 0) await runOnce(connections, asUser(0));
    most = Math.max(most, connections.poolStats().length);
  }
  expect(most).toBe(100);
  const kept = new Set(connections.poolStats().map((stat) => stat.poolId));
  expect(kept.size).toBe(100);
  expect(kept.has(poolIdOf(asUser(0)))).toBe(true);
  // The 99 others are the most recently opened ones.
  for (let i = USERS - 99; i < USERS; i++) expect(kept.has(poolIdOf(asUser(i)))).toBe(true);
}, 30_000);

it('a pool with a connection lent is never closed to make room', async () => {
  connections = createPostgresConnections({ maxPools: 2 });
  const held = await orThrow(connections.acquire(asUser(0)));
  try {
    await runOnce(connections, asUser(1));
    await runOnce(connections, asUser(2));
    await runOnce(connections, asUser(3));
    const ids = connections.poolStats().map((stat) => stat.poolId);
    expect(ids).toContain(poolIdOf(asUser(0)));
    expect(ids).toHaveLength(2);
    expect((await orThrow(held.run('SELECT 1 AS ok', rows))).rows).toEqual([{ ok: 1 }]);
  } finally {
    held.release();
  }
});

it('a new target waits while every pool has a connection lent, and gets a pool once one is given back', async () => {
  connections = createPostgresConnections({ maxPools: 2, waitTimeoutMs: 30_000 });
  const held = await Promise.all([0, 1].map((i) => orThrow(connections.acquire(asUser(i)))));
  let third: Connection | undefined;
  const waiting = orThrow(connections.acquire(asUser(2))).then((lent) => (third = lent));
  // It asked while both pools were busy: no third pool exists, and it has no connection.
  await orThrow(held[1]!.run('SELECT 1', rows));
  expect(connections.poolStats()).toHaveLength(2);
  expect(third).toBeUndefined();
  held[0]?.release();
  await waiting;
  expect((await orThrow(third!.run('SELECT 1 AS ok', rows))).rows).toEqual([{ ok: 1 }]);
  expect(connections.poolStats().map((stat) => stat.poolId)).toEqual([
    poolIdOf(asUser(1)),
    poolIdOf(asUser(2)),
  ]);
  third?.release();
  held[1]?.release();
});

it('refuses a new target with POOL_EXHAUSTED when no pool is given back within the wait', async () => {
  // pg-pool bounds each new connection's login by the wait too: it must fit on a busy machine.
  connections = createPostgresConnections({ maxPools: 2, waitTimeoutMs: 3000 });
  const held = await Promise.all([0, 1].map((i) => orThrow(connections.acquire(asUser(i)))));
  try {
    const failure = await failureOf(connections.acquire(asUser(2)));
    expect(failure).toBeInstanceOf(ConnectionError);
    expect(failure).toMatchObject({ code: 'POOL_EXHAUSTED' });
    expect(failure.message).toMatch(/POOL_TARGETS_MAX/);
    expect(connections.poolStats()).toHaveLength(2);
  } finally {
    for (const connection of held) connection.release();
  }
  // Once they are given back the target is served.
  await runOnce(connections, asUser(2));
});

it('a pool with no clients for unusedPoolTtlMs is closed and removed; a pool in use is kept', async () => {
  connections = createPostgresConnections({ idleTimeoutMs: 50, unusedPoolTtlMs: 200 });
  await runOnce(connections, asUser(0));
  const held = await orThrow(connections.acquire(asUser(1)));
  try {
    expect(connections.poolStats()).toHaveLength(2);
    expect(await until(() => connections.poolStats().length === 1, 2000)).toBe(true);
    expect(connections.poolStats().map((stat) => stat.poolId)).toEqual([poolIdOf(asUser(1))]);
  } finally {
    held.release();
  }
  // Opened again on demand.
  await runOnce(connections, asUser(0));
  expect(connections.poolStats().map((stat) => stat.poolId)).toContain(poolIdOf(asUser(0)));
});

it('an idle client is closed after POOL_IDLE_TIMEOUT_MS; the pool itself stays until its TTL', async () => {
  connections = createPostgresConnections({ idleTimeoutMs: 100 });
  await runOnce(connections, target);
  expect(connections.poolStats()[0]).toMatchObject({ totalConnections: 1, idleConnections: 1 });
  expect(await until(() => connections.poolStats()[0]?.totalConnections === 0, 2000)).toBe(true);
  expect(connections.poolStats()).toHaveLength(1);
});

it('never more than POOL_MAX clients per pool; the others wait', async () => {
  connections = createPostgresConnections({ max: 3 });
  let most = 0;
  let waiting = 0;
  await Promise.all(
    Array.from({ length: 12 }, async () => {
      const connection: Connection = await orThrow(connections.acquire(target));
      try {
        const [stat] = connections.poolStats();
        most = Math.max(most, stat?.totalConnections ?? 0);
        waiting = Math.max(waiting, stat?.waitingClients ?? 0);
        await orThrow(connection.run('SELECT pg_sleep(0.02)', rows));
      } finally {
        connection.release();
      }
    }),
  );
  expect(most).toBe(3);
  expect(waiting).toBeGreaterThan(0);
});

it('refuses a borrow with POOL_EXHAUSTED at its own deadline, and leaves no waiter behind', async () => {
  connections = createPostgresConnections({ max: 1, waitTimeoutMs: 2000 });
  const held = await orThrow(connections.acquire(target));
  try {
    const started = performance.now();
    const failure = await failureOf(connections.acquire(target));
    expect(failure).toBeInstanceOf(ConnectionError);
    expect(failure).toMatchObject({ code: 'POOL_EXHAUSTED', systemCode: 'POOL_EXHAUSTED' });
    expect(failure.message).toMatch(/became free within 2000 ms/);
    expect(performance.now() - started).toBeGreaterThan(1900);
    // pg-pool's own timer took the waiter out of its queue.
    expect(connections.poolStats()).toEqual([expect.objectContaining({ waitingClients: 0 })]);
  } finally {
    held.release();
  }
  await runOnce(connections, target);
});
