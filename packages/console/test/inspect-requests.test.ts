import { catalogTruncation, errorOf, planBody } from '../src/browser/inspect-requests';

describe('the errors of the console’s own requests', () => {
  it('show PostgreSQL’s code and message from a one-statement answer’s error object', () => {
    const body = {
      error: { message: 'cannot execute nextval() in a read-only transaction', code: '25006' },
    };
    expect(errorOf({ status: 400, body })).toBe(
      '25006: cannot execute nextval() in a read-only transaction',
    );
  });

  it('show the cause of sqlgate’s sentence, with its hint', () => {
    const body = {
      error: 'Query failed',
      cause: { message: 'relation "nosuchtable" does not exist', code: '42P01', hint: 'Check it' },
    };
    expect(errorOf({ status: 400, body })).toBe(
      '42P01: relation "nosuchtable" does not exist (Check it)',
    );
  });

  it('fall back to the HTTP status when the answer says nothing', () => {
    expect(errorOf({ status: 504, body: {} })).toBe('HTTP 504');
  });
});

describe('a catalog cut by a limit', () => {
  it('says how many rows of which answer a row or size limit left', () => {
    expect(catalogTruncation([{ rows: [{}, {}] }, { rows: [] }])).toBeUndefined();
    expect(
      catalogTruncation([{ rows: [{}, {}], truncated: true, truncatedBy: 'rows' }, { rows: [] }]),
    ).toEqual({ rows: 2, by: 'rows' });
    expect(
      catalogTruncation([{ rows: [] }, { rows: [{}], truncated: true, truncatedBy: 'bytes' }]),
    ).toEqual({ rows: 1, by: 'bytes' });
  });
});

describe('a plan’s request', () => {
  const target = { body: { host: 'h' }, headers: {}, params: [1], key: 'k', readOnly: false };
  it('sends the form’s params with a statement that has placeholders, and only then', () => {
    const explain = (sql: string) =>
      planBody(target, { sql: `EXPLAIN (FORMAT JSON) ${sql}`, readOnly: true, dryRun: false });
    expect(explain('SELECT * FROM t WHERE id = $1')).toMatchObject({ params: [1], readOnly: true });
    expect(explain('SELECT * FROM t')).not.toHaveProperty('params');
  });
});
