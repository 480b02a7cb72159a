import type { TokenKind } from '../../src/parser/lexer';
import { tokenize } from './tokenize';
import { splitSql } from '../../src/parser';

/** The tokens of `sql` as [kind, text] pairs. */
function tokens(sql: string): Array<[TokenKind, string]> {
  return tokenize(sql).map((token) => [token.kind, sql.slice(token.start, token.end)]);
}

describe('lexer: string literals', () => {
  it('keeps -- inside string literals', () => {
    expect(splitSql("SELECT '-- not a comment'; SELECT 2")).toEqual([
      "SELECT '-- not a comment'",
      'SELECT 2',
    ]);
  });

  it('keeps /* inside string literals', () => {
    expect(splitSql("SELECT '/* not a comment'; SELECT 2")).toEqual([
      "SELECT '/* not a comment'",
      'SELECT 2',
    ]);
  });

  it("'a   b -- not a comment ; c' is unchanged", () => {
    expect(splitSql("SELECT 'a   b -- not a comment ; c';")).toEqual([
      "SELECT 'a   b -- not a comment ; c'",
    ]);
  });

  it("'' inside a string does not end it", () => {
    expect(splitSql("SELECT 'it''s; fine'; SELECT 2")).toEqual([
      "SELECT 'it''s; fine'",
      'SELECT 2',
    ]);
  });

  it('a backslash escapes nothing in a plain string (standard_conforming_strings is on)', () => {
    expect(splitSql("SELECT 'a\\'; SELECT 2")).toEqual(["SELECT 'a\\'", 'SELECT 2']);
  });

  it("E'' strings take backslash escapes, so \\' does not end them", () => {
    expect(splitSql("SELECT E'a\\'; b'; SELECT 2")).toEqual(["SELECT E'a\\'; b'", 'SELECT 2']);
    expect(splitSql("SELECT e'\\\\'; SELECT 2")).toEqual(["SELECT e'\\\\'", 'SELECT 2']);
  });

  it("U&'' strings have no backslash escapes at lexing time, and UESCAPE follows them", () => {
    const sql = "SELECT U&' \\' UESCAPE '!' AS tricky, U&'d!0061t' UESCAPE '!'";
    expect(splitSql(sql)).toEqual([sql]);
    expect(tokens("U&'\\'")).toEqual([['string', "U&'\\'"]]);
  });

  it("B'' and X'' literals are strings", () => {
    expect(tokens("B'1010' X'1F'")).toEqual([
      ['string', "B'1010'"],
      ['string', "X'1F'"],
    ]);
  });

  it("B'' literals have no '' escape: the second quote starts a new literal", () => {
    expect(tokens("B'10''01'")).toEqual([
      ['string', "B'10'"],
      ['string', "'01'"],
    ]);
  });

  it("N'' is the word N followed by a string, as PostgreSQL lexes it", () => {
    expect(tokens("N'it''s;'")).toEqual([
      ['word', 'N'],
      ['string', "'it''s;'"],
    ]);
    expect(splitSql("SELECT N'it''s;'; SELECT 2")).toEqual(["SELECT N'it''s;'", 'SELECT 2']);
  });

  it('a prefix letter inside a longer word does not start a string', () => {
    expect(tokens("xe'a'")).toEqual([
      ['word', 'xe'],
      ['string', "'a'"],
    ]);
  });

  it('a continued string literal is one token and keeps its gap byte for byte', () => {
    const sql = "SELECT 'first'\n   'second'\n\t'third' AS x";
    expect(tokens("'first'\n   'second'")).toEqual([['string', "'first'\n   'second'"]]);
    expect(splitSql(sql)).toEqual([sql]);
  });

  it('a -- comment inside a continuation gap belongs to the literal (scan.l allows it)', () => {
    expect(tokens("'a' -- note\n'b'")).toEqual([['string', "'a' -- note\n'b'"]]);
  });

  it('two strings on one line are not a continuation', () => {
    expect(tokens("'a' 'b'")).toEqual([
      ['string', "'a'"],
      ['string', "'b'"],
    ]);
  });

  it('a /* */ comment between string segments is removed without joining them', () => {
    // PostgreSQL rejects this; the normalised text must still be rejected, not become 'ab'.
    const sql = "SELECT 'a'\n'b' /* no */\n'c' AS x";
    expect(splitSql(sql)).toEqual(["SELECT 'a'\n'b' 'c' AS x"]);
  });
});

describe('lexer: dollar quotes and parameters', () => {
  it('a $$ body with semicolons stays one statement', () => {
    const sql = 'DO $$ BEGIN PERFORM 1; PERFORM 2; END $$';
    expect(splitSql(`${sql}; SELECT 3`)).toEqual([sql, 'SELECT 3']);
  });

  it('a $tag$ body may contain $$ and other tags', () => {
    const sql =
      'CREATE FUNCTION f() RETURNS text AS $fn$ SELECT $$x;$$ || $a$ ; $a$ $fn$ LANGUAGE sql';
    expect(splitSql(`${sql};SELECT 2`)).toEqual([sql, 'SELECT 2']);
  });

  it('keeps whitespace and comments inside a dollar body', () => {
    const sql = 'SELECT $$ a   b -- c\n /* d */ $$';
    expect(splitSql(sql)).toEqual([sql]);
  });

  it('$1 is a parameter, not a dollar quote', () => {
    expect(tokens('$1')).toEqual([['parameter', '$1']]);
    expect(splitSql('SELECT $1; SELECT $2')).toEqual(['SELECT $1', 'SELECT $2']);
  });

  it('a dollar-quote tag cannot start with a digit', () => {
    expect(tokens('$1$')).toEqual([
      ['parameter', '$1'],
      ['other', '$'],
    ]);
  });

  it('x$$ inside an identifier is not a quote start', () => {
    expect(tokens('x$$')).toEqual([['word', 'x$$']]);
    expect(splitSql('SELECT x$$; SELECT 2')).toEqual(['SELECT x$$', 'SELECT 2']);
  });

  it('a $ that starts no quote is a lone character', () => {
    expect(tokens('$abc')).toEqual([
      ['other', '$'],
      ['word', 'abc'],
    ]);
  });
});

describe('lexer: identifiers, comments, numbers, operators', () => {
  it('quoted identifiers keep "" escapes, semicolons and spaces', () => {
    expect(splitSql('SELECT 1 AS "a"";  b"; SELECT 2')).toEqual([
      'SELECT 1 AS "a"";  b"',
      'SELECT 2',
    ]);
  });

  it('U&"" quoted identifiers are one token', () => {
    expect(tokens('U&"d\\0061t"')).toEqual([['quoted-ident', 'U&"d\\0061t"']]);
  });

  it('removes -- comments', () => {
    expect(splitSql('SELECT 1 -- one; two\n, 2')).toEqual(['SELECT 1 , 2']);
  });

  it('block comments nest', () => {
    expect(splitSql('SELECT /* a /* b; */ c; */ 1')).toEqual(['SELECT 1']);
  });

  it('a comment between two tokens becomes one space', () => {
    expect(splitSql('SELECT a/*c*/b')).toEqual(['SELECT a b']);
    expect(splitSql('SELECT 1--c\n+2')).toEqual(['SELECT 1 +2']);
  });

  it('runs of whitespace outside literals become one space, and empty gaps stay empty', () => {
    expect(splitSql('  SELECT\t\t1+2 ,\r\n\n  3  ')).toEqual(['SELECT 1+2 , 3']);
  });

  it('an operator stops before -- and /*', () => {
    expect(tokens('+--c')).toEqual([
      ['operator', '+'],
      ['comment', '--c'],
    ]);
    expect(splitSql('SELECT 2*/*c*/3')).toEqual(['SELECT 2* 3']);
  });

  it('an operator loses a trailing + or - unless it holds a non-SQL operator character', () => {
    expect(tokens('=-1').map(([kind, text]) => `${kind}:${text}`)).toEqual([
      'operator:=',
      'operator:-',
      'number:1',
    ]);
    expect(tokens('@-')).toEqual([['operator', '@-']]);
  });

  it('numbers keep their exponent and fraction, and never swallow a comment', () => {
    expect(tokens('1.5e-3 .5 1e--c')).toEqual([
      ['number', '1.5e-3'],
      ['number', '.5'],
      ['number', '1e'],
      ['comment', '--c'],
    ]);
    expect(tokens('1..2').map(([kind]) => kind)).toEqual(['number', 'punctuation', 'number']);
  });

  it('psql variables :var, :\'var\' and :"var" are ordinary tokens', () => {
    const sql = 'SELECT :var, :\'v;ar\', :"v;ar"';
    expect(tokens(":'v'")).toEqual([
      ['punctuation', ':'],
      ['string', "'v'"],
    ]);
    expect(splitSql(`${sql}; SELECT 2`)).toEqual([sql, 'SELECT 2']);
  });

  it('keeps characters outside the Basic Multilingual Plane intact', () => {
    const sql = 'SELECT \'😀 ;\', "😀", x😀y';
    expect(splitSql(sql)).toEqual([sql]);
    expect(tokens('x😀y')).toEqual([['word', 'x😀y']]);
  });
});

describe('lexer: whitespace is what PostgreSQL 15 takes as whitespace (decisions 10.11)', () => {
  it('space, tab, newline, carriage return and form feed separate tokens', () => {
    expect(splitSql('SELECT\t1\f,\r\n2')).toEqual(['SELECT 1 , 2']);
  });

  it('a vertical tab is not whitespace: SELECT\\v1 stays one run for PostgreSQL to refuse', () => {
    expect(tokens('SELECT\v1')).toEqual([
      ['word', 'SELECT'],
      ['other', '\v'],
      ['number', '1'],
    ]);
    expect(splitSql('SELECT\v1')).toEqual(['SELECT\v1']);
  });

  it('a vertical tab does not join the parts of a continued string', () => {
    expect(tokens("'a'\n\v'b'").map(([kind]) => kind)).toEqual(['string', 'other', 'string']);
  });
});

describe('lexer: standard_conforming_strings off (decisions 10.11)', () => {
  const off = { standardConformingStrings: false };

  it("backslashes escape in '...' as in E'...', so the split follows", () => {
    const sql = "SELECT 'x\\'  ; SELECT 1 --'";
    expect(splitSql(sql)).toEqual(["SELECT 'x\\'", 'SELECT 1']);
    // One statement whose string is `x'  ; SELECT 1 --`, as PostgreSQL reads it.
    expect(splitSql(sql, off)).toEqual([sql]);
  });

  it("keeps the literal whole: 'a\\'   ' is one string, the rest a comment", () => {
    const sql = "SELECT 'a\\'   ' AS v --'";
    expect(splitSql(sql, off)).toEqual(["SELECT 'a\\'   ' AS v"]);
    expect(tokenize(sql, 0, sql.length, false).map((t) => sql.slice(t.start, t.end))).toEqual([
      'SELECT',
      "'a\\'   '",
      'AS',
      'v',
      "--'",
    ]);
  });

  it("N'...' follows the setting; E'', U&'', B'' and X'' do not change", () => {
    expect(splitSql("SELECT N'a\\'; b'", off)).toEqual(["SELECT N'a\\'; b'"]);
    expect(splitSql("SELECT E'a\\'; b'", off)).toEqual(["SELECT E'a\\'; b'"]);
    expect(splitSql("SELECT U&'a\\'; SELECT 2", off)).toEqual(["SELECT U&'a\\'", 'SELECT 2']);
    expect(splitSql("SELECT X'1f'; SELECT 2", off)).toEqual(["SELECT X'1f'", 'SELECT 2']);
  });

  it('continued segments take escapes too', () => {
    const sql = "SELECT 'a'\n'b\\'; c'; SELECT 2";
    expect(splitSql(sql, off)).toEqual(["SELECT 'a'\n'b\\'; c'", 'SELECT 2']);
  });

  it("flags the tokens whose end depends on the setting: plain '...' strings with a backslash", () => {
    const flagged = (sql: string) =>
      tokenize(sql)
        .filter((t) => t.plainStringBackslash)
        .map((t) => sql.slice(t.start, t.end));
    expect(flagged("SELECT 'a\\', E'b\\\\', U&'c\\', N'd\\', 'e'")).toEqual(["'a\\'", "'d\\'"]);
  });
});
