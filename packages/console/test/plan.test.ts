import { explainRequest, formatMs, planNodes, planOf, unexplainable } from '../src/browser/plan';

/** EXPLAIN (FORMAT JSON, ANALYZE, BUFFERS) of a hash join, as PostgreSQL writes it. */
const ANALYZED = [
  {
    Plan: {
      'Node Type': 'Hash Join',
      'Join Type': 'Inner',
      'Total Cost': 35.5,
      'Plan Rows': 4,
      'Actual Total Time': 10,
      'Actual Rows': 3,
      'Actual Loops': 1,
      'Hash Cond': '(o.my_table_id = m.id)',
      'Shared Hit Blocks': 2,
      'Shared Read Blocks': 0,
      Plans: [
        {
          'Node Type': 'Seq Scan',
          'Parent Relationship': 'Outer',
          'Relation Name': 'orders',
          Alias: 'o',
          'Plan Rows': 3,
          'Actual Total Time': 1,
          'Actual Rows': 3,
          'Actual Loops': 1,
          Filter: "(amount > '6'::numeric)",
          'Rows Removed by Filter': 1,
          'Shared Hit Blocks': 1,
          'Temp Written Blocks': 4,
        },
        {
          'Node Type': 'Hash',
          'Parent Relationship': 'Inner',
          'Plan Rows': 3,
          'Actual Total Time': 6,
          'Actual Rows': 3,
          'Actual Loops': 1,
          Plans: [
            {
              'Node Type': 'Seq Scan',
              'Relation Name': 'my_table',
              Alias: 'm',
              'Plan Rows': 3,
              'Actual Total Time': 5.5,
              'Actual Rows': 3,
              'Actual Loops': 1,
            },
          ],
        },
      ],
    },
    Planning: { 'Shared Hit Blocks': 10 },
    'Planning Time': 0.25,
    Triggers: [],
    'Execution Time': 10.5,
  },
];

describe('a plan from EXPLAIN (FORMAT JSON)', () => {
  it('nests the nodes, with what each reads and its conditions', () => {
    const plan = planOf(ANALYZED);
    expect(plan.analyzed).toBe(true);
    expect(plan.planningMs).toBe(0.25);
    expect(plan.executionMs).toBe(10.5);
    expect(plan.root.nodeType).toBe('Hash Join');
    expect(plan.root.target).toBe('Inner');
    expect(plan.root.details).toEqual(['Hash Cond: (o.my_table_id = m.id)']);
    const [outer, hash] = plan.root.children;
    expect(outer?.target).toBe('on orders o');
    expect(outer?.details).toEqual([
      "Filter: (amount > '6'::numeric)",
      'Rows Removed by Filter: 1',
    ]);
    expect(hash?.children[0]?.target).toBe('on my_table m');
    expect(planNodes(plan.root).map((node) => node.nodeType)).toEqual([
      'Hash Join',
      'Seq Scan',
      'Hash',
      'Seq Scan',
    ]);
  });

  it('gives each node its time without its children’s, and its buffers that are not 0', () => {
    const { root } = planOf(ANALYZED);
    expect(planNodes(root).map((node) => node.exclusiveMs)).toEqual([3, 1, 0.5, 5.5]);
    expect(root.actualRows).toBe(3);
    expect(root.estimatedRows).toBe(4);
    expect(root.buffers).toBe('shared hit 2');
    expect(root.children[0]?.buffers).toBe('shared hit 1, temp written 4');
    expect(root.children[1]?.buffers).toBeUndefined();
  });

  it('marks the nodes that took at least a fifth of the time, the slowest three at most', () => {
    const { root } = planOf(ANALYZED);
    expect(planNodes(root).map((node) => node.slow)).toEqual([true, false, false, true]);
  });

  it('counts the time of every loop of a node', () => {
    const { root } = planOf({
      Plan: {
        'Node Type': 'Nested Loop',
        'Actual Total Time': 1,
        'Actual Rows': 3,
        'Actual Loops': 1,
        Plans: [
          {
            'Node Type': 'Seq Scan',
            'Actual Total Time': 0.1,
            'Actual Rows': 3,
            'Actual Loops': 1,
          },
          {
            'Node Type': 'Index Scan',
            'Relation Name': 'my_table',
            'Index Name': 'my_table_pkey',
            'Actual Total Time': 0.2,
            'Actual Rows': 1,
            'Actual Loops': 3,
          },
        ],
      },
    });
    const inner = root.children[1];
    expect(inner?.target).toBe('on my_table using my_table_pkey');
    expect(inner?.loops).toBe(3);
    expect(inner?.totalMs).toBeCloseTo(0.6);
    expect(root.exclusiveMs).toBeCloseTo(0.3);
  });

  it('has estimates only without ANALYZE, and nothing marked', () => {
    const plan = planOf(
      JSON.stringify([
        {
          Plan: {
            'Node Type': 'ModifyTable',
            Operation: 'Insert',
            'Relation Name': 'my_table',
            'Plan Rows': 1,
            'Total Cost': 0.01,
            Plans: [{ 'Node Type': 'Result', 'Plan Rows': 1 }],
          },
        },
      ]),
    );
    expect(plan.analyzed).toBe(false);
    expect(plan.root.target).toBe('on my_table Insert');
    expect(plan.root.actualRows).toBeUndefined();
    expect(plan.root.exclusiveMs).toBeUndefined();
    expect(planNodes(plan.root).some((node) => node.slow)).toBe(false);
    expect(plan.executionMs).toBeUndefined();
  });

  it('refuses a value that is not a plan', () => {
    expect(() => planOf([{ rows: [] }])).toThrow('The answer holds no plan');
    expect(() => planOf(null)).toThrow('The answer holds no plan');
  });
});

describe('the EXPLAIN request of a statement', () => {
  it('reads only, for a plain EXPLAIN and for ANALYZE of a read', () => {
    expect(explainRequest('SELECT 1', false)).toEqual({
      sql: 'EXPLAIN (FORMAT JSON) SELECT 1',
      readOnly: true,
      dryRun: false,
    });
    expect(explainRequest('INSERT INTO t VALUES (1)', false).readOnly).toBe(true);
    expect(explainRequest('WITH x AS (SELECT 1) SELECT * FROM x', true)).toEqual({
      sql: 'EXPLAIN (FORMAT JSON, ANALYZE, BUFFERS) WITH x AS (SELECT 1) SELECT * FROM x',
      readOnly: true,
      dryRun: false,
    });
  });

  it('is a dry run, rolled back, for ANALYZE of a statement that may write', () => {
    expect(explainRequest('DELETE FROM t', true)).toEqual({
      sql: 'EXPLAIN (FORMAT JSON, ANALYZE, BUFFERS) DELETE FROM t',
      readOnly: false,
      dryRun: true,
    });
  });

  it('is read-only, so PostgreSQL refuses a write, when the form says Read only', () => {
    expect(explainRequest('INSERT INTO t VALUES (1)', true, true)).toEqual({
      sql: 'EXPLAIN (FORMAT JSON, ANALYZE, BUFFERS) INSERT INTO t VALUES (1)',
      readOnly: true,
      dryRun: false,
    });
  });
});

describe('the statements EXPLAIN takes', () => {
  it.each([
    'SELECT 1',
    '/* why */ select 1',
    '(SELECT 1)',
    'INSERT INTO t VALUES (1)',
    'update t set a = 1',
    'DELETE FROM t',
    'MERGE INTO t USING s ON true WHEN MATCHED THEN DELETE',
    'VALUES (1)',
    'TABLE t',
    'WITH x AS (SELECT 1) SELECT * FROM x',
    'EXECUTE q(1)',
    'DECLARE c CURSOR FOR SELECT 1',
    'CREATE TABLE t2 AS SELECT 1',
    'CREATE TEMP TABLE t2 AS SELECT 1',
    'CREATE UNLOGGED TABLE IF NOT EXISTS t2 AS SELECT 1',
    'CREATE MATERIALIZED VIEW m AS SELECT 1',
  ])('takes %s', (statement) => {
    expect(unexplainable(statement)).toBeUndefined();
  });

  it.each(['COMMIT', 'END', 'VACUUM t', 'CREATE INDEX i ON t (a)', 'CREATE VIEW v AS SELECT 1'])(
    'refuses %s before any request, naming it',
    (statement) => {
      const first = statement.split(' ')[0] as string;
      expect(unexplainable(statement)).toMatch(
        new RegExp(`^${first} cannot be explained: EXPLAIN takes SELECT, INSERT`),
      );
    },
  );
});

it('prints milliseconds with the digits that matter', () => {
  expect(formatMs(0.0123)).toBe('0.012 ms');
  expect(formatMs(12.345)).toBe('12.35 ms');
  expect(formatMs(1234.5)).toBe('1235 ms');
});
