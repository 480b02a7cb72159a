import { loadParser, parseSql } from '../../src/parser';
import { runsOnStandby } from '../../src/parser/standby-safety';
import type { ConnectionTarget } from '../../src/ports/connections';
import {
  chooseReplica,
  consistencyTokenOf,
  replicaLagMs,
  requestRunsOnStandby,
  walPositionOf,
  walPositionOfToken,
  type ReadRouting,
  type ReplicaView,
  type RouteRequest,
} from '../../src/routing';
import { createQueryService } from '../../src/service';
import { MemoryCacheStore } from '../../src/cache';
import type { QueryOptions } from '../../src/request';
import { databaseError, FakeConnectionProvider, fakeTarget } from '../fakes/fake-connections';

beforeAll(async () => {
  await loadParser();
});

const onStandby = (sql: string) => parseSql(sql).every(runsOnStandby);

describe('which statements may run on a standby', () => {
  test.each([
    'SELECT 1',
    'SELECT * FROM orders WHERE id = $1',
    'SELECT now(), random()',
    'SELECT pg_is_in_recovery()',
    'SELECT current_database(), current_user, version()',
    'WITH t AS (SELECT 1 AS n) SELECT n FROM t',
  ])('%s does', (sql) => {
    expect(onStandby(sql)).toBe(true);
  });

  test.each([
    "SELECT nextval('s')",
    'SELECT my_function()',
    'SELECT app.refresh_totals(1)',
    'SELECT pg_advisory_lock(1)',
    'SELECT pg_advisory_xact_lock(1)',
    'SELECT * FROM orders FOR UPDATE',
    'INSERT INTO orders VALUES (1)',
    'WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d',
    "SET search_path = 'x'",
    'BEGIN',
    'CREATE TABLE t (n int)',
    // A standby refuses these ("recovery is in progress"), or answers from its own session.
    'SELECT pg_current_wal_lsn()',
    "SELECT pg_catalog.pg_current_wal_insert_lsn() - '0/0'",
    'SELECT * FROM pg_current_wal_flush_lsn()',
    "SELECT currval('s')",
    'SELECT lastval()',
  ])('%s does not', (sql) => {
    expect(onStandby(sql)).toBe(false);
  });

  test('a request does only outside a session, never as a COPY FROM, when every statement does', () => {
    const reads = parseSql('SELECT 1; SELECT now()');
    expect(requestRunsOnStandby(reads, { inSession: false, copyFrom: false })).toBe(true);
    expect(requestRunsOnStandby(reads, { inSession: true, copyFrom: false })).toBe(false);
    expect(requestRunsOnStandby(reads, { inSession: false, copyFrom: true })).toBe(false);
    const mixed = parseSql('SELECT 1; UPDATE t SET n = 1');
    expect(requestRunsOnStandby(mixed, { inSession: false, copyFrom: false })).toBe(false);
    const copy = parseSql('COPY t FROM STDIN');
    expect(requestRunsOnStandby(copy, { inSession: false, copyFrom: false })).toBe(false);
  });
});

const replica = (fields: Partial<ReplicaView> & { index: number }): ReplicaView => ({
  usable: true,
  lagMs: 0,
  replayPosition: 100n,
  busy: 0,
  ...fields,
});

describe('choosing a replica', () => {
  test('the least busy one whose lag is known and within the bound', () => {
    const replicas = [
      replica({ index: 0, busy: 3 }),
      replica({ index: 1, busy: 1 }),
      replica({ index: 2, busy: 0, lagMs: 5_000 }),
      replica({ index: 3, busy: 0, lagMs: undefined }),
      replica({ index: 4, busy: 0, usable: false }),
    ];
    expect(chooseReplica(replicas, { maxLagMs: 1000 })?.index).toBe(1);
  });

  test('none left: undefined, the primary serves', () => {
    expect(chooseReplica([replica({ index: 0, usable: false })], { maxLagMs: 1000 })).toBe(
      undefined,
    );
    expect(chooseReplica([], { maxLagMs: 1000 })).toBe(undefined);
  });

  test("a token's position: only a replica that has replayed it", () => {
    const replicas = [
      replica({ index: 0, replayPosition: 90n }),
      replica({ index: 1, replayPosition: 120n, busy: 5 }),
      replica({ index: 2, replayPosition: undefined }),
    ];
    expect(chooseReplica(replicas, { maxLagMs: 1000, atLeast: 100n })?.index).toBe(1);
    expect(chooseReplica(replicas, { maxLagMs: 1000, atLeast: 200n })).toBe(undefined);
  });

  test('equally idle replicas take turns', () => {
    const replicas = [replica({ index: 0 }), replica({ index: 1 })];
    expect(chooseReplica(replicas, { maxLagMs: 1000 }, 0)?.index).toBe(0);
    expect(chooseReplica(replicas, { maxLagMs: 1000 }, 1)?.index).toBe(1);
  });
});

describe('lag', () => {
  test('none once the replica has replayed what the primary wrote, however old its last transaction', () => {
    expect(
      replicaLagMs({ primaryPosition: 100n, replayPosition: 100n, replayAgeMs: 3_600_000 }),
    ).toBe(0);
  });

  test('behind: the age of its last replayed transaction; unknown without the positions', () => {
    expect(replicaLagMs({ primaryPosition: 200n, replayPosition: 100n, replayAgeMs: 1500 })).toBe(
      1500,
    );
    expect(
      replicaLagMs({ primaryPosition: 200n, replayPosition: 100n, replayAgeMs: undefined }),
    ).toBe(undefined);
    expect(replicaLagMs({ primaryPosition: undefined, replayPosition: 100n, replayAgeMs: 0 })).toBe(
      undefined,
    );
  });

  test('WAL positions compare as numbers; tokens carry them opaquely', () => {
    expect(walPositionOf('1/0')! > walPositionOf('0/FFFFFFFF')!).toBe(true);
    expect(walPositionOf('nonsense')).toBe(undefined);
    const token = consistencyTokenOf('16/B374D848');
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(walPositionOfToken(token)).toBe(walPositionOf('16/B374D848'));
    expect(walPositionOfToken('not a token!')).toBe(undefined);
    expect(walPositionOfToken(Buffer.from('x').toString('base64url'))).toBe(undefined);
  });
});

describe('the service with a read routing', () => {
  const primary: ConnectionTarget = { ...fakeTarget, name: 'app' };
  const replicaTarget: ConnectionTarget = { ...fakeTarget, name: 'app/replica-0', port: 6543 };
  const options: QueryOptions = { rowMode: 'object', readOnly: false, dryRun: false };

  function serviceWithRouting() {
    const fake = new FakeConnectionProvider();
    const routes: RouteRequest[] = [];
    const readRouting: ReadRouting = {
      route: (target, request) => {
        if (target.name !== 'app') return undefined;
        routes.push(request);
        return request.runsOnStandby
          ? { target: replicaTarget, servedBy: 'replica' }
          : { target, servedBy: 'primary' };
      },
      tokenAfterWrite: () => Promise.resolve(consistencyTokenOf('0/10')),
      close: () => undefined,
    };
    const service = createQueryService({ connections: fake, readRouting });
    return { fake, routes, service };
  }

  const acquiredPorts = (fake: FakeConnectionProvider) =>
    fake.calls.flatMap((call) => (call.kind === 'acquire' ? [call.target.port] : []));

  test('a read runs on the replica and says so; it carries no token', async () => {
    const { fake, service } = serviceWithRouting();
    const answer = await service.execute({ target: primary, sql: 'SELECT 1', options });
    expect(answer.servedBy).toBe('replica');
    expect(answer.body).toMatchObject({ servedBy: 'replica' });
    expect(answer.consistencyToken).toBe(undefined);
    expect(acquiredPorts(fake)).toEqual([6543]);
  });

  test('a write runs on the primary and its answer carries a token', async () => {
    const { fake, service } = serviceWithRouting();
    const answer = await service.execute({ target: primary, sql: 'UPDATE t SET n = 1', options });
    expect(answer.servedBy).toBe('primary');
    expect(answer.consistencyToken).toBe(consistencyTokenOf('0/10'));
    expect(acquiredPorts(fake)).toEqual([fakeTarget.port]);
  });

  test('a readOnly request that reaches the primary carries no token', async () => {
    const { service } = serviceWithRouting();
    const answer = await service.execute({
      target: primary,
      sql: 'SELECT my_function()',
      options: { ...options, readOnly: true },
    });
    expect(answer.servedBy).toBe('primary');
    expect(answer.consistencyToken).toBe(undefined);
  });

  test('a SERIALIZABLE read stays on the primary: a standby refuses it', async () => {
    const { service } = serviceWithRouting();
    const answer = await service.execute({
      target: primary,
      sql: 'SELECT 1',
      options: { ...options, isolationLevel: 'serializable' },
    });
    expect(answer.servedBy).toBe('primary');
  });

  test('a read the standby cancelled for its recovery runs again on the primary', async () => {
    const { fake, service } = serviceWithRouting();
    fake.once('SELECT 1', {
      error: databaseError('40001', 'canceling statement due to conflict with recovery'),
    });
    const answer = await service.execute({ target: primary, sql: 'SELECT 1', options });
    expect(answer.failure).toBeUndefined();
    expect(answer.servedBy).toBe('primary');
    expect(acquiredPorts(fake)).toEqual([6543, fakeTarget.port]);
  });

  test('a read the standby refused as a write runs on the primary, and its answer carries a token', async () => {
    const { fake, service } = serviceWithRouting();
    fake.once('SELECT * FROM v', {
      error: databaseError('25006', 'cannot execute INSERT in a read-only transaction'),
    });
    const answer = await service.execute({ target: primary, sql: 'SELECT * FROM v', options });
    expect(answer.failure).toBeUndefined();
    expect(answer.servedBy).toBe('primary');
    expect(answer.consistencyToken).toBe(consistencyTokenOf('0/10'));
    expect(acquiredPorts(fake)).toEqual([6543, fakeTarget.port]);
  });

  test('a read of an unlogged table, which a standby does not have, runs on the primary', async () => {
    const { fake, service } = serviceWithRouting();
    fake.once('SELECT * FROM u', {
      error: databaseError(
        '0A000',
        'cannot access temporary or unlogged relations during recovery',
      ),
    });
    const answer = await service.execute({ target: primary, sql: 'SELECT * FROM u', options });
    expect(answer.failure).toBeUndefined();
    expect(answer.servedBy).toBe('primary');
    expect(answer.consistencyToken).toBe(undefined);
  });

  test("the caller's token reaches the routing", async () => {
    const { routes, service } = serviceWithRouting();
    await service.execute(
      { target: primary, sql: 'SELECT 1', options },
      { consistencyToken: 'abc' },
    );
    expect(routes).toMatchObject([{ runsOnStandby: true, consistencyToken: 'abc' }]);
  });

  test('transaction control writes nothing, but COMMIT makes writes visible: it carries a token', async () => {
    const { service } = serviceWithRouting();
    const begin = await service.execute({ target: primary, sql: 'BEGIN', options });
    expect(begin.servedBy).toBe('primary');
    expect(begin.consistencyToken).toBe(undefined);
    for (const sql of ['COMMIT', 'END', "COMMIT PREPARED 'x'"]) {
      const answer = await service.execute({ target: primary, sql, options });
      expect(answer.consistencyToken).toBe(consistencyTokenOf('0/10'));
    }
  });

  test('a read that may fill the result cache runs on the primary; without the cache, on a replica', async () => {
    const fake = new FakeConnectionProvider();
    const readRouting: ReadRouting = {
      route: (target, request) =>
        request.runsOnStandby
          ? { target: replicaTarget, servedBy: 'replica' }
          : { target, servedBy: 'primary' },
      tokenAfterWrite: () => Promise.resolve(undefined),
      close: () => undefined,
    };
    const service = createQueryService({
      connections: fake,
      readRouting,
      cacheStore: new MemoryCacheStore(),
    });
    const cached = await service.execute({
      target: primary,
      sql: 'SELECT 1',
      options: { ...options, cache: {} },
    });
    expect(cached.servedBy).toBe('primary');
    const uncached = await service.execute({ target: primary, sql: 'SELECT 2', options });
    expect(uncached.servedBy).toBe('replica');
    expect(acquiredPorts(fake)).toEqual([fakeTarget.port, 6543]);
  });

  test('a connection without replicas: answers as before', async () => {
    const { service } = serviceWithRouting();
    const answer = await service.execute({ target: fakeTarget, sql: 'SELECT 1', options });
    expect(answer.servedBy).toBe(undefined);
    expect(answer.body).not.toHaveProperty('servedBy');
  });
});
