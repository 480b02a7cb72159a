import { createParseMemo, loadParser, parseSql } from '../../src/parser';

beforeAll(() => loadParser());

describe('createParseMemo', () => {
  it('serves a repeated text from memory, with the statements parseSql gives', () => {
    const parse = createParseMemo();
    const first = parse("SELECT 'a  b' AS x; INSERT INTO t VALUES (1)");
    expect(parse("SELECT 'a  b' AS x; INSERT INTO t VALUES (1)")).toBe(first);
    expect(first.map((statement) => [statement.text, statement.statementClass])).toEqual(
      parseSql("SELECT 'a  b' AS x; INSERT INTO t VALUES (1)").map((statement) => [
        statement.text,
        statement.statementClass,
      ]),
    );
    expect(Object.isFrozen(first)).toBe(true);
  });

  it('parses texts longer than the limit every time', () => {
    const parse = createParseMemo({ maxTextLength: 10 });
    expect(parse('SELECT 1 AS long_enough')).not.toBe(parse('SELECT 1 AS long_enough'));
  });

  it('forgets the least recently used text beyond its size', () => {
    const parse = createParseMemo({ maxEntries: 1 });
    const first = parse('SELECT 1');
    parse('SELECT 2');
    expect(parse('SELECT 1')).not.toBe(first);
  });
});
