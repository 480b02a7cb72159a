import { csvExportOf } from '../src/browser/export-plan';
import {
  applyLine,
  cancelUnfinished,
  closeUnfinished,
  isRowLine,
  RowBudget,
  emptyRun,
  errorInfoOf,
  retryAfterSeconds,
  runOfJsonAnswer,
  transactionOutcome,
  withRetryAfter,
  type RunResult,
} from '../src/browser/results';

function runOf(lines: unknown[]): RunResult {
  const run = emptyRun();
  for (const line of lines) applyLine(run, typeof line === 'string' ? line : JSON.stringify(line));
  return run;
}

const int4 = { name: 'n', dataTypeName: 'int4', dataTypeID: 23 };
const jsonb = { name: 'doc', dataTypeName: 'jsonb', dataTypeID: 3802 };

describe('a run built from NDJSON lines', () => {
  it('gives one statement per statement line, with its rows and end figures', () => {
    const run = runOf([
      { statement: { index: 0, text: 'SELECT 1', fields: [int4] } },
      '{"row":[1]}',
      { end: { index: 0, command: 'SELECT', rowCount: 1, executionTime: 0.5 } },
      { statement: { index: 1, text: 'SELECT 2', fields: [int4] } },
      '{"row":[2]}',
      '{"row":[3]}',
      {
        end: {
          index: 1,
          command: 'SELECT',
          rowCount: 2,
          executionTime: 0.25,
          truncated: true,
          truncatedBy: 'rows',
        },
      },
      { done: { totalExecutionTime: 3 } },
    ]);
    expect(run.outcome).toEqual({ state: 'succeeded', totalExecutionTime: 3 });
    expect(
      run.statements.map((s) => [s.index, s.state, s.rows, s.rowCount, s.truncated ?? false]),
    ).toEqual([
      [0, 'done', [[1]], 1, false],
      [1, 'done', [[2], [3]], 2, true],
    ]);
    expect(run.statements[1]?.truncatedBy).toBe('rows');
  });

  it('keeps json and jsonb values as PostgreSQL wrote them', () => {
    const run = runOf([
      { statement: { index: 0, text: 'SELECT', fields: [int4, jsonb] } },
      '{"row":[1,{"big":12345678901234567890,"k":1.10,"k":2}]}',
      '{"row":[2,null]}',
    ]);
    expect(run.statements[0]?.rows).toEqual([
      [1, { json: '{"big":12345678901234567890,"k":1.10,"k":2}' }],
      [2, null],
    ]);
  });

  it('marks the failed statement and the run, and keeps the transaction outcome of done', () => {
    const run = runOf([
      { statement: { index: 0, text: 'INSERT', fields: [] } },
      { end: { index: 0, command: 'INSERT', rowCount: 1, executionTime: 1 } },
      {
        error: {
          error: 'Transaction failed at statement: SELECT 1/0... Error: division by zero',
          failedStatementIndex: 1,
          rolledBack: true,
          transactionUsed: true,
          cause: {
            message: 'division by zero',
            code: '22012',
            statementIndex: 1,
            location: { line: 2, column: 9 },
          },
        },
      },
      { done: { totalExecutionTime: 2, transactionUsed: true, rolledBack: true } },
    ]);
    expect(run.outcome.state).toBe('failed');
    expect(run.outcome.error).toMatchObject({
      code: '22012',
      statementIndex: 1,
      location: { line: 2, column: 9 },
    });
    expect(run.statements.map((s) => [s.index, s.state])).toEqual([
      [0, 'done'],
      [1, 'failed'],
    ]);
    expect(transactionOutcome(run.outcome)).toBe('Transaction rolled back: nothing was kept');
  });

  it('calls a run cancelled when sqlgate says so', () => {
    const run = runOf([
      { error: { error: 'The request was cancelled', cancelled: true } },
      { done: { totalExecutionTime: 1 } },
    ]);
    expect(run.outcome.state).toBe('cancelled');
  });

  it('refuses a row before any statement', () => {
    expect(() => runOf(['{"row":[1]}'])).toThrow('before its statement');
  });
});

describe('a run built from a JSON answer', () => {
  it('reads a QueryExecutionResult as one statement', () => {
    const run = runOfJsonAnswer(200, {
      rows: [[1, { a: 1 }]],
      fields: [int4, jsonb],
      rowCount: 1,
      command: 'SELECT',
      executionTime: 1,
      statement: 'SELECT 1',
      cacheStatus: 'hit',
    });
    expect(run.outcome.state).toBe('succeeded');
    expect(run.statements).toEqual([
      expect.objectContaining({
        index: 0,
        text: 'SELECT 1',
        rows: [[1, { json: '{"a":1}' }]],
        cacheStatus: 'hit',
        state: 'done',
      }),
    ]);
  });

  it('reads a MultipleStatementsResponse with a failed entry', () => {
    const run = runOfJsonAnswer(400, {
      results: [
        {
          rows: [],
          fields: [],
          rowCount: 1,
          command: 'INSERT',
          executionTime: 1,
          statement: 'INSERT',
        },
        {
          error: 'boom',
          executionTime: 1,
          statement: 'SELECT x',
          cause: { message: 'column "x" does not exist', code: '42703', statementIndex: 1 },
        },
      ],
      error: 'One or more statements failed',
      failedStatementIndex: 1,
      transactionUsed: false,
      totalExecutionTime: 3,
    });
    expect(run.outcome).toMatchObject({ state: 'failed', status: 400, transactionUsed: false });
    expect(run.outcome.error).toMatchObject({
      message: 'column "x" does not exist',
      context: 'One or more statements failed',
      code: '42703',
    });
    expect(run.statements[1]).toMatchObject({ state: 'failed', error: { code: '42703' } });
    expect(transactionOutcome(run.outcome)).toBe(
      'No transaction added: the statements ran as written, and what they committed stays',
    );
  });

  it('reads a one-statement failure and a request sqlgate refused', () => {
    const failed = runOfJsonAnswer(400, {
      error: {
        message: 'syntax error at or near "SELEC"',
        code: '42601',
        statementIndex: 0,
        location: { line: 1, column: 1 },
      },
    });
    expect(failed.statements).toEqual([expect.objectContaining({ index: 0, state: 'failed' })]);
    expect(failed.outcome.error?.location).toEqual({ line: 1, column: 1 });
    const refused = runOfJsonAnswer(403, { error: 'Target not allowed' });
    expect(refused.outcome).toEqual({
      state: 'failed',
      status: 403,
      error: { message: 'Target not allowed' },
    });
  });

  it("keeps a refusal's code and its Retry-After", () => {
    const limited = withRetryAfter(
      runOfJsonAnswer(429, { error: 'Too many requests', code: 'RATE_LIMITED' }),
      '7',
    );
    expect(limited.outcome.error).toEqual({
      message: 'Too many requests',
      code: 'RATE_LIMITED',
      retryAfterSeconds: 7,
    });
    expect(retryAfterSeconds(null)).toBeUndefined();
    expect(retryAfterSeconds('Wed, 21 Oct 2015 07:28:00 GMT')).toBeUndefined();
    expect(withRetryAfter(runOfJsonAnswer(200, { rows: [] }), '3').outcome.error).toBeUndefined();
  });

  it('says why a body that is not JSON failed', () => {
    expect(runOfJsonAnswer(502, undefined).outcome).toEqual({
      state: 'failed',
      status: 502,
      error: { message: 'HTTP 502' },
    });
  });
});

describe('errorInfoOf', () => {
  it('takes the code of a connection failure', () => {
    expect(
      errorInfoOf({ error: { message: 'connect ECONNREFUSED', code: 'ECONNREFUSED' } }),
    ).toEqual({
      message: 'connect ECONNREFUSED',
      code: 'ECONNREFUSED',
    });
  });

  it('ignores a location that is not two numbers', () => {
    expect(
      errorInfoOf({ error: 'x', location: { line: '1', column: 2 } }).location,
    ).toBeUndefined();
  });
});

describe('transactionOutcome', () => {
  it('says nothing while running or for reads run in parallel', () => {
    expect(transactionOutcome({ state: 'running' })).toBeUndefined();
    expect(transactionOutcome({ state: 'succeeded' })).toBeUndefined();
    expect(transactionOutcome({ state: 'succeeded', transactionUsed: true })).toBe(
      'Transaction committed',
    );
  });
});

describe('what a run says it kept', () => {
  it('never says a script that manages its own transactions kept or lost everything', () => {
    const own = transactionOutcome({ state: 'failed', transactionUsed: false, rolledBack: true });
    expect(own).toBe(
      'No transaction added: the statements ran as written, and what they committed stays; the transaction left open was rolled back',
    );
    expect(own).not.toMatch(/nothing was kept|each statement kept/);
    expect(transactionOutcome({ state: 'succeeded', rolledBack: true })).toBe(
      'Rolled back: the open transaction was not committed',
    );
  });

  it('marks statements without an end as incomplete when the answer stops', () => {
    const run = runOf([
      { statement: { index: 0, text: 'SELECT 1', fields: [int4] } },
      { end: { index: 0, command: 'SELECT', rowCount: 0, executionTime: 1 } },
      { statement: { index: 1, text: 'SELECT 2', fields: [int4] } },
      '{"row":[2]}',
    ]);
    closeUnfinished(run);
    expect(run.statements.map((statement) => statement.state)).toEqual(['done', 'incomplete']);
  });
});

describe('a cancelled script', () => {
  it('marks the statement running when Cancel stopped the answer as cancelled, with the code', () => {
    const run = runOf([
      { statement: { index: 0, text: 'SELECT 1 AS a', fields: [int4] } },
      { end: { index: 0, command: 'SELECT', rowCount: 1, executionTime: 1 } },
      { statement: { index: 1, text: 'SELECT pg_sleep(30)', fields: [int4] } },
      { error: { error: 'The request was cancelled', code: 'REQUEST_CANCELLED' } },
    ]);
    cancelUnfinished(run);
    closeUnfinished(run);
    expect(run.statements.map((statement) => statement.state)).toEqual(['done', 'cancelled']);
    expect(run.statements[1]?.error?.code).toBe('REQUEST_CANCELLED');
  });
});

describe('the CSV export of a statement', () => {
  const request = (body: Record<string, unknown> = {}) => ({
    body: { database: 'test', ...body },
    headers: {},
    sql: '/*+ hint */ SELECT 1 -- as sent',
  });
  const done = (index: number, text: string) => ({
    index,
    text,
    fields: [int4],
    rows: [],
    state: 'done' as const,
  });

  it('runs the text of a one-statement run exactly as it was sent', () => {
    const run = { statements: [done(0, 'SELECT 1')], outcome: { state: 'succeeded' as const } };
    expect(csvExportOf(run, request(), run.statements[0]!)).toEqual({
      sql: '/*+ hint */ SELECT 1 -- as sent',
    });
  });

  it('runs one of several reads on its own, and refuses a statement of a script, a dry run or one that did not finish', () => {
    const reads = {
      statements: [done(0, 'SELECT 1;'), done(1, 'SELECT 2')],
      outcome: { state: 'succeeded' as const },
    };
    expect(csvExportOf(reads, request(), reads.statements[1]!)).toEqual({ sql: 'SELECT 2' });
    const script = { ...reads, outcome: { state: 'succeeded' as const, transactionUsed: true } };
    expect(csvExportOf(script, request(), script.statements[1]!)).toHaveProperty('refused');
    expect(csvExportOf(reads, request({ dryRun: true }), reads.statements[1]!)).toHaveProperty(
      'refused',
    );
    const cached = { ...reads.statements[1]!, cacheStatus: 'hit' };
    expect(csvExportOf(reads, request(), cached)).toHaveProperty('refused');
    const cut = { ...reads.statements[1]!, state: 'incomplete' as const };
    expect(csvExportOf(reads, request(), cut)).toHaveProperty('refused');
  });
});

describe('RowBudget', () => {
  it('keeps rows up to its limit, then marks the statement whose rows it drops', () => {
    const run = runOf([{ statement: { index: 0, text: 'SELECT', fields: [int4] } }]);
    const budget = new RowBudget(25);
    const row = '{"row":[12345]}'; // 15 characters
    expect(isRowLine(row)).toBe(true);
    expect(budget.keep(run, row)).toBe(true);
    expect(run.statements[0]?.droppedByConsole).toBeUndefined();
    expect(budget.keep(run, row)).toBe(false);
    expect(run.statements[0]?.droppedByConsole).toBe(true);
    expect(isRowLine('{"end":{"index":0}}')).toBe(false);
  });
});
