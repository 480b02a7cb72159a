import { loadParser, parseSql, splitSql } from '../../src/parser';

beforeAll(async () => {
  await loadParser();
});

describe('splitting statements', () => {
  it('ends a statement at ; and drops the ;', () => {
    expect(splitSql('SELECT 1; SELECT 2;')).toEqual(['SELECT 1', 'SELECT 2']);
  });

  it('keeps a last statement without ;', () => {
    expect(splitSql('SELECT 1; SELECT 2')).toEqual(['SELECT 1', 'SELECT 2']);
  });

  it('drops empty statements: ;; and statements of only comments', () => {
    expect(splitSql(';; -- only a comment\n; /* and this */ ;SELECT 1;;')).toEqual(['SELECT 1']);
    expect(splitSql('  \n -- nothing\n')).toEqual([]);
  });

  it('a ; inside parentheses does not end the statement', () => {
    expect(splitSql('SELECT (1; 2); SELECT 3')).toEqual(['SELECT (1; 2)', 'SELECT 3']);
  });

  it('a ) without a matching ( is ignored for depth', () => {
    expect(splitSql('SELECT 1); SELECT (2)')).toEqual(['SELECT 1)', 'SELECT (2)']);
  });

  it('BEGIN; ... COMMIT; are statements of their own', () => {
    expect(splitSql('BEGIN; SELECT 1; COMMIT;')).toEqual(['BEGIN', 'SELECT 1', 'COMMIT']);
  });
});

describe('BEGIN ATOMIC bodies', () => {
  const body = 'BEGIN ATOMIC INSERT INTO t VALUES (1); SELECT 2; END';

  it('a ; inside BEGIN ATOMIC ... END of CREATE FUNCTION does not end the statement', () => {
    const sql = `CREATE FUNCTION f() RETURNS int LANGUAGE sql ${body}`;
    expect(splitSql(`${sql}; SELECT 3`)).toEqual([sql, 'SELECT 3']);
  });

  it('CREATE OR REPLACE PROCEDURE bodies too', () => {
    const sql = `CREATE OR REPLACE PROCEDURE p() LANGUAGE sql ${body}`;
    expect(splitSql(`${sql}; SELECT 3`)).toEqual([sql, 'SELECT 3']);
  });

  it('CASE ... END inside the body does not close it early', () => {
    const sql =
      'CREATE FUNCTION f(x int) RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT CASE WHEN x > 0 THEN 1 ELSE 0 END; SELECT 2; END';
    expect(splitSql(`${sql}; SELECT 3`)).toEqual([sql, 'SELECT 3']);
  });

  it('CREATE SCHEMA may hold such a function', () => {
    const sql = `CREATE SCHEMA s CREATE FUNCTION f() RETURNS int LANGUAGE sql ${body}`;
    expect(splitSql(`${sql}; SELECT 3`)).toEqual([sql, 'SELECT 3']);
  });

  it('BEGIN ATOMIC outside a routine does not hold back ;', () => {
    expect(splitSql('SELECT begin atomic; SELECT 2')).toEqual(['SELECT begin atomic', 'SELECT 2']);
  });
});

describe('unterminated constructs reach PostgreSQL unchanged, as one final statement', () => {
  it('an unterminated string runs to the end: nothing after the quote is split or normalised', () => {
    expect(splitSql("SELECT 1; SELECT 'abc;\n  SELECT   2;")).toEqual([
      'SELECT 1',
      "SELECT 'abc;\n  SELECT   2;",
    ]);
  });

  it('an unterminated quoted identifier', () => {
    expect(splitSql('SELECT 1 AS "a; SELECT 2')).toEqual(['SELECT 1 AS "a; SELECT 2']);
  });

  it('an unterminated dollar quote', () => {
    expect(splitSql('SELECT 0; DO $$ BEGIN; SELECT 2')).toEqual([
      'SELECT 0',
      'DO $$ BEGIN; SELECT 2',
    ]);
  });

  it('an unterminated block comment is kept so PostgreSQL reports it', () => {
    expect(splitSql('SELECT 1 /* open; SELECT 2')).toEqual(['SELECT 1 /* open; SELECT 2']);
    expect(splitSql('SELECT 1; /* open; SELECT 2')).toEqual(['SELECT 1', '/* open; SELECT 2']);
  });

  it('an unterminated statement is classified as a write with unknown relations', () => {
    const [statement] = parseSql("SELECT 'abc");
    expect(statement?.statementClass).toBe('write');
    expect(statement?.relations).toEqual({ reads: null, writes: null });
  });
});

describe('parsed statements: index, positions, terminated', () => {
  it('counts index among kept statements and tells whether ; ended each', () => {
    const statements = parseSql(';; SELECT 1;\n;\nSELECT 2');
    expect(statements.map((s) => [s.index, s.text, s.terminated])).toEqual([
      [0, 'SELECT 1', true],
      [1, 'SELECT 2', false],
    ]);
  });

  it('gives the start (offset, line, column) of the first token and the end offset', () => {
    const sql = '-- header\nSELECT 1;\n\n  /* c */ SELECT\n 2';
    const [first, second] = parseSql(sql);
    expect(first?.start).toEqual({ offset: 10, line: 2, column: 1 });
    expect(first?.end).toBe(18);
    expect(second?.start).toEqual({ offset: 31, line: 4, column: 11 });
    expect(sql.slice(second!.start.offset, second!.end)).toBe('SELECT\n 2');
  });

  it('counts \\r\\n as one line break', () => {
    const [, second] = parseSql('SELECT 1;\r\n\r\nSELECT 2');
    expect(second?.start).toMatchObject({ line: 3, column: 1 });
  });

  it('the first keyword is upper-cased, after leading parentheses', () => {
    expect(parseSql('select 1; (SELECT 1) UNION (SELECT 2); :x').map((s) => s.keyword)).toEqual([
      'SELECT',
      'SELECT',
      '',
    ]);
  });
});

describe('locate(): PostgreSQL error positions back to the submitted text', () => {
  it('maps a position past a removed comment and collapsed whitespace', () => {
    const sql = 'SELECT 1;\nSELECT /* note */ a,\n       bogus FROM t';
    const statement = parseSql(sql)[1]!;
    expect(statement.text).toBe('SELECT a, bogus FROM t');
    const position = statement.text.indexOf('bogus') + 1;
    expect(statement.locate(position)).toEqual({
      offset: sql.indexOf('bogus'),
      line: 3,
      column: 8,
    });
  });

  it('counts characters, not UTF-16 units, as PostgreSQL does', () => {
    const sql = "SELECT '😀😀',\n  bogus";
    const [statement] = parseSql(sql);
    // PostgreSQL: 'bogus' starts at character 14 of "SELECT '😀😀', bogus".
    expect(statement!.locate(14)).toEqual({ offset: sql.indexOf('bogus'), line: 2, column: 3 });
  });

  it('columns count characters too', () => {
    const sql = "SELECT '😀', bogus";
    expect(parseSql(sql)[0]!.locate(13)).toEqual({
      offset: sql.indexOf('bogus'),
      line: 1,
      column: 13,
    });
  });

  it('maps the end of input (position = length + 1) to the end of the statement', () => {
    const sql = 'SELECT 1;  SELECT (1 +   ';
    const statement = parseSql(sql)[1]!;
    expect(statement.locate(statement.text.length + 1).offset).toBe(statement.end);
  });

  it('keeps positions inside a continued literal exact', () => {
    const sql = "SELECT 'a'\n    'b', bogus";
    const [statement] = parseSql(sql);
    expect(statement!.locate(statement!.text.indexOf('bogus') + 1).offset).toBe(
      sql.indexOf('bogus'),
    );
  });
});
