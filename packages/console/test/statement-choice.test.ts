import { statementToShow } from '../src/browser/statement-choice';
import {
  applyLine,
  asCancelled,
  emptyRun,
  runOfJsonAnswer,
  type RunResult,
  type StatementResult,
} from '../src/browser/results';

const int4 = { name: 'n', dataTypeName: 'int4', dataTypeID: 23 };

function statement(index: number, rows: boolean, state: StatementResult['state'] = 'done') {
  return { index, text: '', fields: rows ? [int4] : [], rows: [], state };
}

function run(statements: StatementResult[]): RunResult {
  return { statements, outcome: { state: 'succeeded' } };
}

describe('the statement a finished run opens on', () => {
  it('is the last one that returned rows', () => {
    expect(
      statementToShow(run([statement(0, true), statement(1, true), statement(2, false)])),
    ).toBe(1);
    expect(statementToShow(run([statement(0, false), statement(1, false)]))).toBe(1);
    expect(statementToShow(run([]))).toBe(0);
  });

  it('is a failed or cancelled statement, before any rows', () => {
    expect(
      statementToShow(run([statement(0, true), statement(1, true, 'failed'), statement(2, true)])),
    ).toBe(1);
    expect(statementToShow(run([statement(0, true), statement(1, true, 'cancelled')]))).toBe(1);
  });
});

describe('a cancelled run', () => {
  const cancelLine = {
    error: {
      error: {
        message: 'canceling statement due to user request',
        code: '57014',
        statementIndex: 1,
      },
      cancelled: true,
    },
  };

  it('marks the statement the cancel stopped as cancelled, not failed', () => {
    const streamed = emptyRun();
    for (const line of [
      { statement: { index: 0, text: 'SELECT 1', fields: [int4] } },
      { end: { index: 0, command: 'SELECT', rowCount: 0 } },
      { statement: { index: 1, text: 'SELECT pg_sleep(30)', fields: [] } },
      cancelLine,
    ]) {
      applyLine(streamed, JSON.stringify(line));
    }
    expect(streamed.outcome.state).toBe('cancelled');
    expect(streamed.statements.map((s) => s.state)).toEqual(['done', 'cancelled']);
  });

  it('turns a 57014 of a run the user cancelled into a cancel; other failures stay failures', () => {
    const answer = runOfJsonAnswer(400, {
      error: {
        message: 'canceling statement due to user request',
        code: '57014',
        statementIndex: 0,
      },
    });
    asCancelled(answer);
    expect(answer.outcome.state).toBe('cancelled');
    expect(answer.statements.map((s) => s.state)).toEqual(['cancelled']);

    const other = runOfJsonAnswer(400, {
      error: { message: 'x', code: '22012', statementIndex: 0 },
    });
    asCancelled(other);
    expect(other.outcome.state).toBe('failed');
  });
});
