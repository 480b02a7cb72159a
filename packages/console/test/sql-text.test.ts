import {
  changesCatalog,
  codeOf,
  onlyReads,
  splitStatements,
  statementAt,
  statementsSelected,
} from '../src/browser/sql-text';

describe('statements of a text', () => {
  it('splits at semicolons outside quotes, dollar quotes and comments', () => {
    const text = [
      'SELECT \'a;b\', "x;y" FROM t; -- c;d',
      'CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql;',
      '/* a; /* nested; */ b; */ SELECT $1;',
      ';;',
    ].join('\n');
    expect(splitStatements(text).map((span) => span.text)).toEqual([
      'SELECT \'a;b\', "x;y" FROM t',
      '-- c;d\nCREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql',
      '/* a; /* nested; */ b; */ SELECT $1',
    ]);
  });

  it('gives each statement its place in the text', () => {
    const text = 'SELECT 1;\n  SELECT 2  ';
    expect(splitStatements(text)).toEqual([
      { from: 0, to: 8, text: 'SELECT 1' },
      { from: 12, to: 20, text: 'SELECT 2' },
    ]);
  });

  it('reads backslash escapes in E strings only', () => {
    expect(
      splitStatements("SELECT E'it\\'s;', 'a''b;'; SELECT 'c\\'; SELECT 2").map((s) => s.text),
    ).toEqual(["SELECT E'it\\'s;', 'a''b;'", "SELECT 'c\\'", 'SELECT 2']);
  });

  it('leaves out statements made only of comments', () => {
    expect(splitStatements('-- nothing\n; /* still nothing */')).toEqual([]);
  });
});

describe('the statement to explain', () => {
  const text = 'SELECT 1;\nSELECT 2;\n\nSELECT 3';

  it('is the selection when there is one', () => {
    expect(statementAt(text, 10, 18)).toBe('SELECT 2');
  });

  it('is the statement under the cursor, or the one the cursor follows', () => {
    expect(statementAt(text, 3, 3)).toBe('SELECT 1');
    expect(statementAt(text, 9, 9)).toBe('SELECT 1');
    expect(statementAt(text, 12, 12)).toBe('SELECT 2');
    expect(statementAt(text, 20, 20)).toBe('SELECT 2');
    expect(statementAt(text, text.length, text.length)).toBe('SELECT 3');
  });

  it('is the only statement wherever the cursor is', () => {
    expect(statementAt('\n\nSELECT 1;\n\n', 0, 0)).toBe('SELECT 1');
  });

  it('is nothing in an empty text', () => {
    expect(statementAt('  -- only a comment', 0, 0)).toBeUndefined();
  });
});

describe('what a statement does', () => {
  it('finds DDL among the statements, not in strings or comments', () => {
    expect(changesCatalog('SELECT 1; CREATE TABLE t (id int)')).toBe(true);
    expect(changesCatalog('-- first\nALTER TABLE t ADD COLUMN c int')).toBe(true);
    expect(changesCatalog("COMMENT ON TABLE t IS 'x'")).toBe(true);
    expect(changesCatalog('drop view v')).toBe(true);
    expect(changesCatalog("SELECT 'CREATE TABLE t'; -- DROP TABLE t")).toBe(false);
    expect(changesCatalog('INSERT INTO t VALUES (1)')).toBe(false);
  });

  it('tells reads from statements that may write', () => {
    expect(onlyReads('SELECT * FROM t')).toBe(true);
    expect(onlyReads('VALUES (1)')).toBe(true);
    expect(onlyReads('TABLE t')).toBe(true);
    expect(onlyReads('WITH x AS (SELECT 1) SELECT * FROM x')).toBe(true);
    expect(onlyReads("SELECT 'insert into' FROM t")).toBe(true);
    expect(onlyReads('WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d')).toBe(false);
    expect(onlyReads('SELECT * INTO copy FROM t')).toBe(false);
    expect(onlyReads('SELECT * FROM t FOR UPDATE')).toBe(false);
    expect(onlyReads('INSERT INTO t VALUES (1)')).toBe(false);
    expect(onlyReads('UPDATE t SET a = 1')).toBe(false);
    expect(onlyReads('CALL p()')).toBe(false);
  });

  it('blanks quoted parts and comments out of the code', () => {
    expect(codeOf('a \'b\' "c" $$d$$ -- e\nf /* g */').trim().split(/\s+/)).toEqual(['a', 'f']);
  });
});

describe('the statements a selection holds', () => {
  it('counts the selection’s statements, and one without a selection', () => {
    const text = 'SELECT 1; SELECT 2; SELECT 3;';
    expect(statementsSelected(text, 0, text.length)).toBe(3);
    expect(statementsSelected(text, 0, 8)).toBe(1);
    expect(statementsSelected(text, 4, 4)).toBe(1);
  });
});
