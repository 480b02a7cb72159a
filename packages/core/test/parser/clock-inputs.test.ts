/**
 * docs/decisions.md 10.36: a read whose date/time input may read a clock word is never cached.
 * What PostgreSQL really does with each form is checked against a real server in
 * apps/http-express/test/cache-clock.test.ts; this pins the classification itself.
 */
import { loadParser, parseSql, type ParsedStatement } from '../../src/parser';
import { classifyStatement } from '../../src/parser/classify';
import { clockInputOfType, namesTheClock } from '../../src/parser/clock-inputs';

beforeAll(async () => {
  await loadParser();
});

function parseOne(sql: string): ParsedStatement {
  const statements = parseSql(sql);
  expect(statements).toHaveLength(1);
  return statements[0]!;
}

describe('namesTheClock', () => {
  it.each([
    'now',
    ' NOW ',
    'Today',
    'today 10:00',
    'tomorrow allballs',
    'yesterday',
    '{now}',
    '{"2024-01-01", "now"}',
    '[now,infinity)',
    '{n\\ow}',
    '{"n"o"w"}',
    'now\\z',
    'closed today',
  ])('is true for %j', (text) => {
    expect(namesTheClock(text)).toBe(true);
  });

  it.each(['', 'nowhere', 'snow', 'Tomorrowland', 'known', '2024-01-01 10:00+02', 'epoch', 'n ow'])(
    'is false for %j',
    (text) => {
      expect(namesTheClock(text)).toBe(false);
    },
  );
});

describe('clockInputOfType (ParameterDescription OIDs)', () => {
  it('knows clock-free built-ins and their arrays', () => {
    for (const oid of [16, 20, 23, 25, 1043, 1700, 3802, 1007, 1009, 2950, 1186]) {
      expect(clockInputOfType(oid)).toBe('never');
    }
  });

  it('counts date/time types, their arrays, ranges and multiranges, user types and unknown ones', () => {
    // date, time, timestamp, timestamptz, their arrays, tsrange, tstzrange, daterange,
    // tstzmultirange, a user's type, unknown
    for (const oid of [1082, 1083, 1114, 1184, 1182, 1185, 3908, 3910, 3912, 4534, 16385, 705]) {
      expect(clockInputOfType(oid)).toBe('clock-words');
    }
    expect(clockInputOfType(undefined)).toBe('clock-words');
  });

  it('counts timetz as reading the clock whatever its value', () => {
    expect(clockInputOfType(1266)).toBe('always');
    expect(clockInputOfType(1270)).toBe('always');
  });
});

describe('reads that read the clock (callsVolatileFunction)', () => {
  it.each([
    ["an E'' escape spelling now", "SELECT E'no\\x77'::timestamptz"],
    ["a U&'' escape spelling now", "SELECT U&'n\\006Fw'::timestamptz"],
    ['a U& escape with its own UESCAPE', "SELECT U&'n!006Fw' UESCAPE '!'::timestamptz"],
    ['a continued string', "SELECT 'n'\n'ow'::timestamptz"],
    ['a concatenation cast', "SELECT ('n' || 'ow')::timestamptz"],
    ['a function result cast', "SELECT concat('n', 'ow')::timestamptz"],
    ['a column cast', 'SELECT note::timestamptz FROM notes'],
    ['a column cast with CAST', 'SELECT CAST(note AS date) FROM notes'],
    ['a column cast to time with time zone', 'SELECT note::time with time zone FROM notes'],
    ['functional notation', 'SELECT timestamptz(note) FROM notes'],
    ['functional notation of date', 'SELECT date(note) FROM notes'],
    ['a qualified functional notation', 'SELECT pg_catalog.date(note) FROM notes'],
    ['a cast of a cast', "SELECT '2024-01-01'::text::date"],
    ['a parameter cast through text', 'SELECT $1::text::date'],
    ['a cast to a type of a user', 'SELECT note::app.day FROM notes'],
    ['an array of clock words', "SELECT '{now}'::timestamptz[]"],
    ['a date with a clock word and a time', "SELECT 'today 10:00'::timestamp"],
    ['a range', "SELECT '[today,tomorrow)'::daterange"],
    ['a clock word compared implicitly', "SELECT * FROM t WHERE ts > 'now'"],
    ["date 'today'", "SELECT date 'today'"],
    ["timestamptz 'tomorrow'", "SELECT timestamptz 'tomorrow'"],
    ['a dollar-quoted clock word', 'SELECT $x$ Yesterday $x$::date'],
    [
      'a clock word in JSON read into a record',
      `SELECT * FROM json_to_record('{"t": "now"}') AS r(t timestamptz)`,
    ],
    [
      'JSON data read into a record',
      'SELECT r.* FROM notes, jsonb_to_record(notes.doc) AS r(t date)',
    ],
    ['JSON data read as a date', "SELECT JSON_VALUE(doc, '$.t' RETURNING date) FROM notes"],
    // A word before ( that may be an alias column list makes the tree decide: SQL/JSON's
    // functions, which are syntax in the tree, still count.
    [
      'JSON_VALUE beside an alias column list',
      "SELECT JSON_VALUE(x, '$.t' RETURNING date) FROM (VALUES ('{}'::jsonb)) AS v(x)",
    ],
    [
      'JSON_QUERY beside an alias column list',
      "SELECT JSON_QUERY(x, '$.t' RETURNING date) FROM (VALUES ('{}'::jsonb)) AS v(x)",
    ],
    [
      'JSON_TABLE beside an alias column list',
      "SELECT * FROM (VALUES ('[]'::jsonb)) AS v(x), JSON_TABLE(x, '$[*]' COLUMNS (d date PATH '$'))",
    ],
    [
      'an XMLTABLE column of timestamptz, whose path computes now',
      `SELECT d FROM XMLTABLE('/r' PASSING xmlparse(document '<r/>') COLUMNS d timestamptz PATH 'concat("no","w")')`,
    ],
    [
      'an XMLTABLE column of a date array',
      "SELECT d FROM notes, XMLTABLE('/r' PASSING notes.doc COLUMNS d date[] PATH 'd')",
    ],
    [
      'an XMLTABLE column of a type of a user (a domain over date, say)',
      "SELECT d FROM notes, XMLTABLE('/r' PASSING notes.doc COLUMNS n FOR ORDINALITY, d app.day PATH 'd')",
    ],
    [
      'an XMLTABLE column of timetz',
      "SELECT d FROM notes, XMLTABLE('/r' PASSING notes.doc COLUMNS d time with time zone PATH 'd')",
    ],
    ['timetz, whose offset depends on the day', "SELECT '10:00'::timetz"],
    ['a timetz literal', "SELECT timetz '10:00'"],
    ['a time with time zone literal', "SELECT time with time zone '10:00'"],
    [
      'EXPLAIN of a clock word (the plan shows its value)',
      "EXPLAIN SELECT * FROM t WHERE ts > 'now'",
    ],
    ['EXPLAIN of a column cast', 'EXPLAIN SELECT note::date FROM notes'],
    ['a statement the grammar rejects, with a cast', 'SELECT note::date FROM notes WHERE'],
  ])('%s', (_name, sql) => {
    expect(parseOne(sql).callsVolatileFunction).toBe(true);
  });
});

describe('reads whose date/time input is fixed (cacheable)', () => {
  it.each([
    ['a date constant', "SELECT '2024-01-01'::timestamptz"],
    ['a typed date constant', "SELECT date '2024-01-01', timestamp with time zone '2024-01-01'"],
    ['NULL cast', 'SELECT NULL::date'],
    ['casts to clock-free types', 'SELECT count(*)::int, a::text, b::numeric(10, 2) FROM t'],
    ['SQL spellings of clock-free types', 'SELECT a::double precision, b::character varying(3)'],
    ['CAST to a clock-free type', 'SELECT CAST(a AS integer) FROM t'],
    ['words holding a clock word', "SELECT 'nowhere', 'snow', 'knowledge' FROM t"],
    ['an E string without a clock word', "SELECT E'line\\nbreak'"],
    ['a parameter compared with a column', 'SELECT * FROM t WHERE ts > $1'],
    ['a parameter cast', 'SELECT $1::timestamptz'],
    ['a date column read as it is', 'SELECT created_at, date_trunc($$day$$, created_at) FROM t'],
    ['EXPLAIN of now()', 'EXPLAIN SELECT now()'],
    [
      'XMLTABLE columns of clock-free types',
      "SELECT * FROM notes, XMLTABLE('/r' PASSING notes.doc COLUMNS n FOR ORDINALITY, a integer PATH 'a', b text PATH 'b' DEFAULT 'x', c xml PATH 'c')",
    ],
  ])('%s', (_name, sql) => {
    expect(parseOne(sql).callsVolatileFunction).toBe(false);
  });
});

describe('castsParameterToClockType', () => {
  it.each([
    ['$1::timestamptz', 'SELECT $1::timestamptz'],
    ['CAST($1 AS date)', 'SELECT CAST($1 AS date)'],
    ['date($1)', 'SELECT date($1)'],
    ['a parameter cast to an array of dates', 'SELECT * FROM t WHERE d = ANY($2::date[])'],
    ['EXPLAIN of a parameter cast', 'EXPLAIN SELECT $1::timestamp'],
  ])('is true for %s', (_name, sql) => {
    expect(parseOne(sql).castsParameterToClockType).toBe(true);
  });

  it.each([
    ['a parameter cast to int', 'SELECT $1::int'],
    ['a parameter in a comparison', 'SELECT * FROM t WHERE ts > $1'],
    ['a write (never cached)', 'INSERT INTO t VALUES ($1::date)'],
  ])('is false for %s', (_name, sql) => {
    expect(parseOne(sql).castsParameterToClockType).toBe(false);
  });
});

describe('the syntax tree is parsed only where the tokens cannot rule a clock word out', () => {
  it.each([
    'SELECT a, b FROM t WHERE id = $1',
    'SELECT count(*)::int AS n FROM t WHERE name = $1::text',
    "SELECT 'plain', E'escaped\\n', $$dollar$$ FROM t",
    "SELECT 'now'::timestamptz",
    'SELECT CAST(a AS bigint) FROM t',
    "SELECT date '2024-01-01'",
    "SELECT 'first segment'\n'continued' AS joined",
    "SELECT 'n'\n'ow'::timestamptz",
  ])('%s: tokens only', (sql) => {
    expect(classifyStatement(sql).usedTree).toBe(false);
  });

  it.each([
    "SELECT E'no\\x77'::timestamptz",
    "SELECT U&'n\\006Fw'",
    'SELECT note::timestamptz FROM notes',
    "SELECT '2024-01-01'::date",
    'SELECT CAST(a AS date) FROM t',
    'SELECT date(a) FROM t',
  ])('%s: the tree decides', (sql) => {
    expect(classifyStatement(sql).usedTree).toBe(true);
  });
});
