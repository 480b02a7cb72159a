import { formProblems, runProblems } from '../src/browser/connection-problems';
import { blankForm, type ConnectionForm } from '../src/browser/request-fields';
import { emptyRun, type RunResult } from '../src/browser/results';

function form(fields: Partial<ConnectionForm>): ConnectionForm {
  return { ...blankForm(), ...fields };
}

function failed(code: string, message = 'no'): RunResult {
  const run = emptyRun();
  run.outcome = { state: 'failed', status: 502, error: { code, message } };
  return run;
}

describe('the fields a run cannot use', () => {
  it('are every empty required field of the form, with the message of the first', () => {
    expect(formProblems(form({ host: ' ', port: 'x', user: '', database: '' }))).toEqual({
      fields: ['host', 'port', 'user', 'database'],
      message: "'host' is required",
    });
    expect(formProblems(form({ login: 'key' }))).toEqual({
      fields: ['token', 'connection'],
      message: 'A key or token is required',
    });
    expect(formProblems(form({ maxRows: '0' }))?.fields).toEqual(['maxRows']);
    expect(formProblems(blankForm())).toBeUndefined();
  });

  it('are those a failed connect names, for a run that ran no statement', () => {
    expect(runProblems(failed('28P01'), blankForm())?.fields).toEqual(['password']);
    expect(runProblems(failed('ECONNREFUSED', 'connect ECONNREFUSED'), blankForm())).toEqual({
      fields: ['host', 'port'],
      message: 'ECONNREFUSED: connect ECONNREFUSED',
    });
    expect(runProblems(failed('3D000'), blankForm())?.fields).toEqual(['database']);
    expect(runProblems(failed('UNAUTHORIZED'), form({ login: 'key' }))?.fields).toEqual(['token']);
  });

  it('are none for a statement’s own error, a refusal no field fixes, or a success', () => {
    const statementFailed = failed('42P01');
    expect(runProblems(statementFailed, blankForm())).toBeUndefined();
    const ran = failed('28P01');
    ran.statements.push({ index: 0, text: 'SELECT 1', fields: [], rows: [], state: 'failed' });
    expect(runProblems(ran, blankForm())).toBeUndefined();
    expect(runProblems(failed('RATE_LIMITED'), form({ login: 'key' }))).toBeUndefined();
    expect(runProblems({ statements: [], outcome: { state: 'succeeded' } }, blankForm())).toBe(
      undefined,
    );
  });
});
