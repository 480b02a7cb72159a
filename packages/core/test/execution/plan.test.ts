import { RequestError } from '../../src/errors';
import { loadParser, parseSql } from '../../src/parser';
import { planExecution } from '../../src/execution/plan';
import { beginStatement } from '../../src/execution/transaction';
import { defaults, script, statement } from './fixtures';

describe('planExecution', () => {
  it('runs one statement directly, whatever its class', () => {
    for (const kind of [
      'read',
      'write',
      'session',
      'transaction-control',
      'no-transaction',
    ] as const) {
      expect(planExecution(script(statement(kind)), defaults)).toMatchObject({
        strategy: 'single',
        shape: 'single',
      });
    }
  });

  it('runs several independent reads in parallel, each in a READ ONLY transaction', () => {
    const plan = planExecution(script(statement('read'), statement('read')), defaults);
    expect(plan).toMatchObject({
      strategy: 'parallel-reads',
      shape: 'multiple',
      transaction: { readOnly: true },
    });
  });

  it('wraps writes, and reads mixed with them, in one transaction', () => {
    expect(planExecution(script(statement('read'), statement('write')), defaults).strategy).toBe(
      'transaction',
    );
  });

  it('keeps reads that change the session on one connection, in order, READ ONLY', () => {
    const reads = script(statement('read', { changesSession: true }), statement('read'));
    expect(planExecution(reads, defaults)).toMatchObject({
      strategy: 'transaction',
      transaction: { readOnly: true },
    });
  });

  it('runs session statements with the statements that depend on them, in order', () => {
    expect(planExecution(script(statement('session'), statement('read')), defaults).strategy).toBe(
      'transaction',
    );
  });

  it('leaves transaction control to the script when it has any', () => {
    const plan = planExecution(
      script(statement('transaction-control'), statement('write'), statement('no-transaction')),
      defaults,
    );
    expect(plan.strategy).toBe('caller-managed');
  });

  it('runs scripts with statements that cannot run in a transaction in autocommit', () => {
    expect(
      planExecution(script(statement('no-transaction'), statement('read')), defaults).strategy,
    ).toBe('no-transaction');
  });

  it('wraps a single statement in a transaction for readOnly and dryRun, keeping the single shape', () => {
    expect(
      planExecution(script(statement('write')), { ...defaults, readOnly: true }),
    ).toMatchObject({
      strategy: 'transaction',
      shape: 'single',
      transaction: { readOnly: true, rollbackAtEnd: false },
    });
    expect(planExecution(script(statement('write')), { ...defaults, dryRun: true })).toMatchObject({
      strategy: 'transaction',
      shape: 'single',
      transaction: { rollbackAtEnd: true },
    });
  });

  it('runs dryRun reads in the transaction that is rolled back', () => {
    const plan = planExecution(script(statement('read'), statement('read')), {
      ...defaults,
      dryRun: true,
    });
    expect(plan).toMatchObject({ strategy: 'transaction', transaction: { rollbackAtEnd: true } });
  });

  it('passes the isolation level to the transaction it opens', () => {
    const plan = planExecution(script(statement('write'), statement('write')), {
      ...defaults,
      isolationLevel: 'serializable',
    });
    expect(plan.transaction.isolationLevel).toBe('serializable');
  });

  it('refuses params with several statements', () => {
    expect(() =>
      planExecution(script(statement('read'), statement('read')), { ...defaults, params: [1] }),
    ).toThrow("'params' can only be used with exactly one statement");
  });

  it('refuses dryRun and readOnly with statements that escape the transaction', () => {
    for (const option of ['dryRun', 'readOnly'] as const) {
      for (const kind of ['transaction-control', 'no-transaction'] as const) {
        expect(() =>
          planExecution(script(statement('write'), statement(kind)), {
            ...defaults,
            [option]: true,
          }),
        ).toThrow(RequestError);
      }
    }
  });

  it('refuses session statements with readOnly, which could switch the transaction to read-write', () => {
    expect(() =>
      planExecution(script(statement('session')), { ...defaults, readOnly: true }),
    ).toThrow(/readOnly/);
    expect(
      planExecution(script(statement('session')), { ...defaults, dryRun: true }).strategy,
    ).toBe('transaction');
  });

  it('refuses statements that cannot be served over HTTP, naming the reason', () => {
    const copy = statement('write', {
      unsupported: 'COPY ... FROM STDIN is not supported over HTTP',
    });
    expect(() => planExecution(script(statement('read'), copy), defaults)).toThrow(
      'COPY ... FROM STDIN is not supported over HTTP',
    );
  });

  describe('a batch (statements with their own values)', () => {
    it('always runs in one transaction of the service, reads and a lone statement too', () => {
      for (const statements of [
        script(statement('read')),
        script(statement('read'), statement('read')),
        script(statement('write'), statement('read')),
      ]) {
        expect(planExecution(statements, defaults, { batch: true })).toMatchObject({
          strategy: 'transaction',
          shape: 'multiple',
          transaction: { readOnly: false, rollbackAtEnd: false },
        });
      }
    });

    it('refuses transaction control and statements that cannot run in a transaction', () => {
      for (const kind of ['transaction-control', 'no-transaction'] as const) {
        expect(() =>
          planExecution(script(statement('write'), statement(kind)), defaults, { batch: true }),
        ).toThrow(/^A batch cannot hold .* \(statement 1\): it must run in the transaction/);
      }
    });

    it('opens its transaction with the level, READ ONLY and DEFERRABLE it asks for', () => {
      const { transaction } = planExecution(
        script(statement('read')),
        { ...defaults, readOnly: true, isolationLevel: 'serializable', deferrable: true },
        { batch: true },
      );
      expect(beginStatement(transaction)).toBe(
        'BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY DEFERRABLE',
      );
      const uncommitted = planExecution(
        script(statement('write')),
        { ...defaults, isolationLevel: 'read uncommitted' },
        { batch: true },
      ).transaction;
      expect(beginStatement(uncommitted)).toBe('BEGIN ISOLATION LEVEL READ UNCOMMITTED');
    });
  });

  it('refuses readOnly with EXPLAIN ANALYZE of a statement that creates a table, which READ ONLY does not stop', async () => {
    await loadParser();
    for (const sql of [
      'EXPLAIN ANALYZE CREATE TABLE x AS SELECT 1',
      'EXPLAIN (ANALYZE, BUFFERS) CREATE MATERIALIZED VIEW m AS SELECT 1',
      'EXPLAIN ANALYZE SELECT 1 INTO y',
      'EXPLAIN ("analyze") CREATE TABLE x AS SELECT 1',
      'EXPLAIN (ANALYZE off, ANALYZE on) SELECT 1 INTO y',
      'EXPLAIN ANALYZE SELECT 1 INTO y UNION SELECT 2',
    ]) {
      expect(() => planExecution(parseSql(sql), { ...defaults, readOnly: true })).toThrow(
        /'readOnly' cannot be combined with EXPLAIN ANALYZE of a statement that creates a table/,
      );
      expect(() => planExecution(parseSql(sql), { ...defaults, dryRun: true })).not.toThrow();
    }
    expect(() =>
      planExecution(parseSql('EXPLAIN CREATE TABLE x AS SELECT 1'), {
        ...defaults,
        readOnly: true,
      }),
    ).not.toThrow();
  });
});
