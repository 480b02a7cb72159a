// Runs in its own module registry, so the parser starts unloaded here.
import { loadParser, parseSql, splitSql } from '../../src/parser';

describe('loading PostgreSQL parser', () => {
  it('parseSql before loadParser() throws an error that says what to do', () => {
    expect(() => parseSql('SELECT 1')).toThrow(/await loadParser\(\)/);
  });

  it('splitSql does not need the parser', () => {
    expect(splitSql('SELECT 1; SELECT 2')).toEqual(['SELECT 1', 'SELECT 2']);
  });

  it('loadParser() is idempotent: every call returns the same promise', async () => {
    const first = loadParser();
    expect(loadParser()).toBe(first);
    await first;
    expect(parseSql('SELECT 1')).toHaveLength(1);
  });
});
