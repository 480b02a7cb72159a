/** docs/decisions.md 10.20: how far a request's writes reach decides what the cache drops. */
import { requestMayUseCache, writeExtentOf } from '../../src/cache';
import { loadParser, parseSql } from '../../src/parser';

beforeAll(async () => {
  await loadParser();
});

const extentOf = (sql: string) => writeExtentOf(parseSql(sql));

describe('writeExtentOf', () => {
  it.each([
    ['SELECT * FROM t', 'none'],
    ['SELECT now(); SHOW search_path', 'none'],
    ['BEGIN; SELECT 1; COMMIT', 'none'],
    ["ROLLBACK PREPARED 'tx1'", 'none'],
    ['SET search_path TO s', 'none'],
    ['CREATE TEMP TABLE x (a int)', 'none'],
  ])('%s changes nothing cached', (sql, extent) => {
    expect(extentOf(sql)).toBe(extent);
  });

  it.each([
    // Triggers, foreign-key cascades and views make these reach relations they do not name.
    ['INSERT INTO t VALUES (1)'],
    ['UPDATE t SET a = 1'],
    ['DELETE FROM parent WHERE id = 1'],
    ['MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE'],
    ['WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d'],
    ['SELECT * FROM t FOR UPDATE'],
    ['BEGIN; INSERT INTO t VALUES (1); COMMIT'],
  ])('%s invalidates its database', (sql) => {
    expect(extentOf(sql)).toBe('database');
  });

  it.each([
    ['ALTER ROLE alice PASSWORD $$new$$'],
    ['ALTER ROLE alice NOLOGIN'],
    ['GRANT SELECT ON t TO bob'],
    ['TRUNCATE t CASCADE'],
    ['CREATE VIEW v AS SELECT * FROM t'],
    ['DO $$BEGIN UPDATE t SET a = 1; END$$'],
    ['CALL refresh_everything()'],
    ['SELECT write_somewhere()'],
    ['INSERT INTO t VALUES (f())'],
    ['DECLARE c CURSOR WITH HOLD FOR SELECT f()'],
    ['VACUUM t'],
    ['SELECT 1; DROP DATABASE other'],
    // It commits writes some earlier request prepared, perhaps another caller's.
    ["COMMIT PREPARED 'tx1'"],
    ["/* later */ commit   prepared 'tx1'"],
  ])('%s invalidates its whole server', (sql) => {
    expect(extentOf(sql)).toBe('server');
  });
});

describe('requestMayUseCache', () => {
  it.each([['SELECT * FROM t'], ['SELECT 1; SELECT * FROM t']])('allows reads: %s', (sql) => {
    expect(requestMayUseCache(parseSql(sql))).toBe(true);
  });

  it.each([
    // The read must see the write (and must not be kept in case the transaction rolls back).
    ['INSERT INTO t VALUES (1); SELECT * FROM t'],
    // After SET the text no longer says what it reads.
    ['SET search_path TO other; SELECT * FROM t'],
    ['SET ROLE bob; SELECT * FROM t'],
    ['BEGIN; SELECT * FROM t; COMMIT'],
    ['SELECT f(); SELECT * FROM t'],
  ])('refuses anything else in the request: %s', (sql) => {
    expect(requestMayUseCache(parseSql(sql))).toBe(false);
  });
});
