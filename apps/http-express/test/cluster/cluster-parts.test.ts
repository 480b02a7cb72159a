/**
 * The small pure parts of WORKERS=n (docs/decisions.md 10.28): merging statistics, the restart
 * backoff, the process's role, and the WORKERS setting.
 */
import { loadConfig } from '../../src/config';
import { mergePoolStats, newestEntries } from '../../src/cluster/merge-statistics';
import { PRIMARY_PID_VARIABLE, processRole } from '../../src/cluster/process-role';
import { RestartBackoff } from '../../src/cluster/restart-backoff';
import type { CacheEntryOnTheWire } from '../../src/cluster/protocol';

describe('mergePoolStats', () => {
  it('sums every field of pools that share an id, keeping the first-seen order', () => {
    const pool = (poolId: string, n: number) => ({
      poolId,
      totalConnections: n,
      idleConnections: n - 1,
      activeConnections: 1,
      waitingClients: n % 2,
    });
    expect(mergePoolStats([[pool('a', 3), pool('b', 1)], [pool('c', 2)], [pool('a', 5)]])).toEqual([
      {
        poolId: 'a',
        totalConnections: 8,
        idleConnections: 6,
        activeConnections: 2,
        waitingClients: 2,
      },
      pool('b', 1),
      pool('c', 2),
    ]);
  });
});

describe('newestEntries', () => {
  it('takes the most recently cached of all workers, newest first', () => {
    const summary = (query: string, cachedAtMs: number): CacheEntryOnTheWire => ({
      key: query,
      query,
      executionTime: 1,
      cachedAtMs,
      hits: 0,
    });
    const newest = newestEntries(
      [
        [summary('a3', 30), summary('a1', 10)],
        [summary('b4', 40), summary('b2', 20)],
      ],
      3,
    );
    expect(newest.map((each) => each.query)).toEqual(['b4', 'a3', 'b2']);
  });
});

describe('RestartBackoff', () => {
  it('doubles after each short life up to its bound, and starts over after a long one', () => {
    const backoff = new RestartBackoff({
      firstDelayMs: 100,
      maxDelayMs: 1000,
      stableAfterMs: 10_000,
    });
    expect([50, 50, 50, 50, 50, 50].map((lived) => backoff.delayAfter(lived))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
    expect(backoff.delayAfter(60_000)).toBe(100);
    expect(backoff.delayAfter(5)).toBe(200);
  });
});

describe('processRole', () => {
  const facts = (env: Record<string, string>, isClusterPrimary: boolean, parentPid = 100) => ({
    env,
    isClusterPrimary: () => isClusterPrimary,
    parentPid,
  });

  it('is the single server with WORKERS=1, and the primary above', () => {
    expect(processRole(1, facts({}, true))).toBe('single');
    // WORKERS=1 does not need to know (nor load node:cluster to learn).
    expect(
      processRole(1, {
        env: {},
        parentPid: 1,
        isClusterPrimary: () => {
          throw new Error('asked');
        },
      }),
    ).toBe('single');
    expect(processRole(4, facts({}, true))).toBe('primary');
  });

  it('is a worker only when its own parent is the primary that says so', () => {
    expect(processRole(2, facts({ [PRIMARY_PID_VARIABLE]: '100' }, false))).toBe('worker');
    // Inherited by a grandchild, or set by hand in a process that is no worker.
    expect(processRole(1, facts({ [PRIMARY_PID_VARIABLE]: '99' }, false))).toBe('single');
    expect(processRole(2, facts({ [PRIMARY_PID_VARIABLE]: '100' }, true))).toBe('primary');
  });

  it('refuses WORKERS above 1 in a worker of another cluster manager', () => {
    expect(() => processRole(2, facts({}, false))).toThrow(
      "WORKERS must be 1 when sqlgate runs as a worker of another cluster manager, got '2'",
    );
    expect(processRole(1, facts({}, false))).toBe('single');
  });
});

describe('WORKERS', () => {
  it('defaults to 1 and takes an integer from 1', () => {
    expect(loadConfig({}).workers).toBe(1);
    expect(loadConfig({ WORKERS: '3' }).workers).toBe(3);
  });

  it.each(['0', 'abc', '-1', '1.5', '100000'])('refuses %s with one clear line', (value) => {
    expect(() => loadConfig({ WORKERS: value })).toThrow(
      `WORKERS must be an integer from 1 to 1024, got '${value}'`,
    );
  });
});
