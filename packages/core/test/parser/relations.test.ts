import { loadParser, parseSql, type StatementRelations } from '../../src/parser';

beforeAll(async () => {
  await loadParser();
});

function relationsOf(sql: string): StatementRelations {
  const [statement] = parseSql(sql);
  return statement!.relations;
}

describe('relations read and written', () => {
  it('reads the relations in FROM, JOIN and subqueries', () => {
    expect(relationsOf('SELECT * FROM a JOIN s.b ON true WHERE x IN (SELECT y FROM c)')).toEqual({
      reads: ['a', 's.b', 'c'],
      writes: [],
    });
  });

  it('lower-cases unquoted names and keeps quoted ones as written', () => {
    expect(relationsOf('SELECT * FROM Sales.Orders, "MixedCase"')).toEqual({
      reads: ['sales.orders', 'MixedCase'],
      writes: [],
    });
  });

  it('leaves CTE names out of the reads', () => {
    expect(relationsOf('WITH c AS (SELECT * FROM t) SELECT * FROM c')).toEqual({
      reads: ['t'],
      writes: [],
    });
  });

  it('writes the target of INSERT, UPDATE, DELETE and MERGE', () => {
    expect(relationsOf('INSERT INTO t SELECT * FROM u')).toEqual({ reads: ['u'], writes: ['t'] });
    expect(relationsOf('UPDATE t SET a = u.a FROM u WHERE t.id = u.id')).toEqual({
      reads: ['u'],
      writes: ['t'],
    });
    expect(relationsOf('DELETE FROM s.t')).toEqual({ reads: [], writes: ['s.t'] });
    expect(
      relationsOf('MERGE INTO t USING u ON t.id = u.id WHEN MATCHED THEN DELETE').writes,
    ).toEqual(['t']);
  });

  it('writes the tables of a data-modifying CTE', () => {
    expect(relationsOf('WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d')).toEqual({
      reads: [],
      writes: ['t'],
    });
  });

  it('writes the target of SELECT ... INTO and CREATE TABLE ... AS', () => {
    expect(relationsOf('SELECT * INTO t2 FROM t')).toEqual({ reads: ['t'], writes: ['t2'] });
    expect(relationsOf('CREATE TABLE t2 AS SELECT * FROM t')).toEqual({
      reads: ['t'],
      writes: ['t2'],
    });
  });

  it('writes the target of DDL and TRUNCATE', () => {
    expect(relationsOf('ALTER TABLE t ADD COLUMN b int').writes).toEqual(['t']);
    expect(relationsOf('TRUNCATE a, b').writes).toEqual(['a', 'b']);
    expect(relationsOf('DROP TABLE s.a, b').writes).toEqual(['s.a', 'b']);
    expect(relationsOf("COPY t FROM '/x.csv'").writes).toEqual(['t']);
  });

  it('is unknown for DROP ... CASCADE, DO, CALL and EXECUTE', () => {
    expect(relationsOf('DROP TABLE t CASCADE').writes).toBeNull();
    expect(relationsOf('DO $$ BEGIN END $$')).toEqual({ reads: null, writes: null });
    expect(relationsOf('CALL p()')).toEqual({ reads: null, writes: null });
    expect(relationsOf('EXECUTE q')).toEqual({ reads: null, writes: null });
  });

  it('writes are unknown when a called function writes (nextval, dblink)', () => {
    expect(relationsOf("SELECT nextval('s')").writes).toBeNull();
  });

  it('reads are unknown when an unknown function is called, since it may read anything', () => {
    expect(relationsOf('SELECT my_function() FROM t').reads).toBeNull();
  });

  it('reads nothing and writes nothing for SET', () => {
    expect(relationsOf('SET a.b = 1')).toEqual({ reads: [], writes: [] });
  });

  it('for EXPLAIN, uses the inner statement: a plain EXPLAIN writes nothing', () => {
    expect(relationsOf('EXPLAIN UPDATE t SET a = 1')).toEqual({ reads: [], writes: [] });
    expect(relationsOf('EXPLAIN ANALYZE UPDATE t SET a = 1')).toEqual({ reads: [], writes: ['t'] });
  });

  it('is unknown when PostgreSQL cannot parse the statement', () => {
    expect(relationsOf('SELECT * FROM :tbl')).toEqual({ reads: null, writes: [] });
    expect(relationsOf('UPDATE :tbl SET a = 1')).toEqual({ reads: null, writes: null });
  });

  it('is an own enumerable property, kept when a statement is spread or serialised', () => {
    const [statement] = parseSql('SELECT * FROM t');
    expect({ ...statement }.relations).toEqual({ reads: ['t'], writes: [] });
    expect(JSON.parse(JSON.stringify(statement)).relations).toEqual({ reads: ['t'], writes: [] });
  });

  it('can be replaced', () => {
    const [statement] = parseSql('SELECT * FROM t');
    statement!.relations = { reads: null, writes: null };
    expect(statement!.relations).toEqual({ reads: null, writes: null });
  });
});
