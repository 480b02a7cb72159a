import { loadParser, parseSql, splitSql, UnterminatedTextError } from '../../src/parser';

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

describe('unterminated constructs are refused before anything runs (decisions 10.10)', () => {
  /** The error splitSql throws for `sql`, as the response body shows it. */
  function refusal(sql: string): { message: string; body: Record<string, unknown> } {
    try {
      splitSql(sql);
    } catch (error) {
      expect(error).toBeInstanceOf(UnterminatedTextError);
      const refused = error as UnterminatedTextError;
      expect(refused.code).toBe('INVALID_REQUEST');
      return { message: refused.message, body: refused.body };
    }
    throw new Error(`splitSql accepted ${JSON.stringify(sql)}`);
  }

  it('an unterminated string, with the line and column where it starts', () => {
    expect(refusal("SELECT 1; SELECT 'abc;\n  SELECT   2;")).toEqual({
      message: 'Unterminated string starting at line 1, column 18',
      body: { location: { line: 1, column: 18 } },
    });
  });

  it("E'', U&'' and a continued string that never closes are strings too", () => {
    expect(refusal("SELECT 1;\nSELECT E'a\\'").message).toBe(
      'Unterminated string starting at line 2, column 8',
    );
    expect(refusal("SELECT U&'x").message).toBe('Unterminated string starting at line 1, column 8');
    expect(refusal("SELECT 'a'\n  'b").message).toBe(
      'Unterminated string starting at line 1, column 8',
    );
  });

  it('an unterminated quoted identifier', () => {
    expect(refusal('SELECT 1 AS "a; SELECT 2').message).toBe(
      'Unterminated quoted identifier starting at line 1, column 13',
    );
  });

  it('an unterminated dollar quote', () => {
    expect(refusal('SELECT 0; DO $$ BEGIN; SELECT 2').message).toBe(
      'Unterminated dollar-quoted string starting at line 1, column 14',
    );
  });

  it('an unterminated block comment, also after the last statement and when nested', () => {
    expect(refusal('SELECT 1 /* open; SELECT 2').message).toBe(
      'Unterminated block comment starting at line 1, column 10',
    );
    expect(refusal('SELECT 1;\r\n/* a /* b */ still open').message).toBe(
      'Unterminated block comment starting at line 2, column 1',
    );
  });

  it('columns count characters, as PostgreSQL does', () => {
    expect(refusal("SELECT '😀', 'x").message).toBe(
      'Unterminated string starting at line 1, column 13',
    );
  });

  it('a megabyte of /* is refused at once', () => {
    const started = performance.now();
    expect(refusal('/*'.repeat(500_000)).message).toBe(
      'Unterminated block comment starting at line 1, column 1',
    );
    // A scan that went back over the text for each /* would take hours; one pass, milliseconds.
    // The bound tells the two apart on any machine, however loaded.
    expect(performance.now() - started).toBeLessThan(20_000);
  }, 30_000);

  it('parseSql refuses the same texts', async () => {
    await loadParser();
    expect(() => parseSql("SELECT 'abc")).toThrow(UnterminatedTextError);
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

describe('sql: what runs is the text as written (decisions 10.9)', () => {
  it('keeps comments and whitespace inside the statement, without the trailing ; or comments', () => {
    const sql = "SELECT /*+ SeqScan(t) */ a,\n  'x  y' -- note\n  FROM t; -- after\nSELECT 2";
    const [first, second] = parseSql(sql);
    expect(first?.sql).toBe("SELECT /*+ SeqScan(t) */ a,\n  'x  y' -- note\n  FROM t");
    expect(first?.text).toBe("SELECT a, 'x  y' FROM t");
    expect(second?.sql).toBe('SELECT 2');
  });

  it('starts at a block comment before the first token (a leading hint), as psql sends it', () => {
    const sql = '-- header\n/*+ SeqScan(t) */\nSELECT 1; /* two */ SELECT 2;\n-- only\nSELECT 3';
    expect(parseSql(sql).map((s) => [s.sql, s.text])).toEqual([
      ['/*+ SeqScan(t) */\nSELECT 1', 'SELECT 1'],
      ['/* two */ SELECT 2', 'SELECT 2'],
      ['SELECT 3', 'SELECT 3'],
    ]);
  });

  it('keeps a one-character gap as written, even where normalising gives the same length', () => {
    const [statement] = parseSql('SELECT\n1,\t2');
    expect(statement?.text).toBe('SELECT 1, 2');
    expect(statement?.sql).toBe('SELECT\n1,\t2');
  });

  it('a comment-only statement does not lend its comment to the next one', () => {
    expect(parseSql('/* a */ ; SELECT 1').map((s) => s.sql)).toEqual(['SELECT 1']);
  });
});

describe('locate(): PostgreSQL error positions back to the submitted text', () => {
  it('maps a position in the executed text, comments included, to line and column', () => {
    const sql = 'SELECT 1;\nSELECT /* note */ a,\n       bogus FROM t';
    const statement = parseSql(sql)[1]!;
    expect(statement.sql).toBe('SELECT /* note */ a,\n       bogus FROM t');
    const position = statement.sql.indexOf('bogus') + 1;
    expect(statement.locate(position)).toEqual({
      offset: sql.indexOf('bogus'),
      line: 3,
      column: 8,
    });
  });

  it('counts from a leading comment when the statement starts with one', () => {
    const sql = 'SELECT 1;\n/* hint */\nSELECT bogus';
    const statement = parseSql(sql)[1]!;
    expect(statement.locate(statement.sql.indexOf('bogus') + 1)).toEqual({
      offset: sql.indexOf('bogus'),
      line: 3,
      column: 8,
    });
  });

  it('counts characters, not UTF-16 units, as PostgreSQL does', () => {
    const sql = "SELECT '😀😀',\n  bogus";
    const [statement] = parseSql(sql);
    // PostgreSQL: 'bogus' starts at character 16 of "SELECT '😀😀',\n  bogus".
    expect(statement!.locate(16)).toEqual({ offset: sql.indexOf('bogus'), line: 2, column: 3 });
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
    expect(statement.locate(Array.from(statement.sql).length + 1).offset).toBe(statement.end);
  });

  it('keeps positions inside a continued literal exact', () => {
    const sql = "SELECT 'a'\n    'b', bogus";
    const [statement] = parseSql(sql);
    expect(statement!.locate(statement!.sql.indexOf('bogus') + 1).offset).toBe(
      sql.indexOf('bogus'),
    );
  });
});

describe('standard_conforming_strings off: classification never trusts a misread tree', () => {
  it("a statement with a backslash in '...' gets unknown relations when the setting is off", () => {
    const sql = "SELECT 'a\\\\' FROM t";
    expect(parseSql(sql)[0]?.relations).toEqual({ reads: ['t'], writes: [] });
    const [off] = parseSql(sql, { standardConformingStrings: false });
    expect(off?.statementClass).toBe('read');
    expect(off?.relations).toEqual({ reads: null, writes: [] });
  });

  it('a data-modifying CTE is still a write when its tree cannot be trusted', () => {
    const sql = "WITH d AS (DELETE FROM t RETURNING 1) SELECT 'a\\'', * FROM d";
    const [statement] = parseSql(sql, { standardConformingStrings: false });
    expect(statement?.statementClass).toBe('write');
  });

  it('tells whether the setting could make an unterminated text complete', () => {
    const dependsOnSetting = (sql: string): boolean => {
      try {
        splitSql(sql);
      } catch (error) {
        return (error as UnterminatedTextError).dependsOnStringSetting;
      }
      throw new Error('accepted');
    };
    expect(dependsOnSetting("SELECT 'a\\'' ")).toBe(true);
    expect(dependsOnSetting("SELECT 'a\\', 'b")).toBe(true);
    expect(dependsOnSetting("SELECT E'a\\\\', 'b")).toBe(false);
    expect(dependsOnSetting('SELECT "a')).toBe(false);
  });
});
