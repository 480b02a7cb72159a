import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createParseMemo, loadParser, parseSql } from '../../src/parser';
import { estimateEntryBytes } from '../../src/parser/parse-memo';

beforeAll(() => loadParser());

describe('createParseMemo', () => {
  it('serves a repeated text from memory, with the statements parseSql gives', () => {
    const parse = createParseMemo();
    const first = parse("SELECT 'a  b' AS x; INSERT INTO t VALUES (1)");
    expect(parse("SELECT 'a  b' AS x; INSERT INTO t VALUES (1)")).toBe(first);
    expect(first.statements.map((statement) => [statement.text, statement.statementClass])).toEqual(
      parseSql("SELECT 'a  b' AS x; INSERT INTO t VALUES (1)").map((statement) => [
        statement.text,
        statement.statementClass,
      ]),
    );
    expect(Object.isFrozen(first.statements)).toBe(true);
  });

  it('serves both standard_conforming_strings settings from one entry when they cannot differ', () => {
    const parse = createParseMemo();
    const text = "SELECT 'a' || E'\\n'";
    const conforming = parse(text, { standardConformingStrings: true });
    expect(conforming.dependsOnStringSetting).toBe(false);
    expect(parse(text, { standardConformingStrings: false })).toBe(conforming);
  });

  it('keeps one result per setting when a backslash in a plain string makes them differ', () => {
    const parse = createParseMemo();
    const text = "SELECT 'x\\'  ; SELECT 1 --'";
    const conforming = parse(text);
    const nonConforming = parse(text, { standardConformingStrings: false });
    expect(conforming.dependsOnStringSetting).toBe(true);
    expect(conforming.statements.map((statement) => statement.sql)).toEqual([
      "SELECT 'x\\'",
      'SELECT 1',
    ]);
    expect(nonConforming.statements.map((statement) => statement.sql)).toEqual([
      "SELECT 'x\\'  ; SELECT 1 --'",
    ]);
    expect(parse(text, { standardConformingStrings: true })).toBe(conforming);
    expect(parse(text, { standardConformingStrings: false })).toBe(nonConforming);
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

describe('the parse memo’s memory bound (docs/decisions.md 10.17)', () => {
  /** Distinct texts of 4 KB of `a;`: 2,048 statements each, the shape that pinned a gigabyte. */
  const semicolonText = (index: number): string => {
    const suffix = `b${index};`;
    return 'a;'.repeat((4096 - suffix.length) >> 1) + suffix;
  };

  it('keeps none of 1,000 distinct 4 KB texts of `a;`: a text of more than 16 statements', () => {
    const parse = createParseMemo();
    expect(parse.maxBytes).toBe(16 * 1024 * 1024);
    for (let index = 0; index < 1000; index += 1) {
      const text = semicolonText(index);
      expect(text.length).toBeLessThanOrEqual(4096);
      parse(text);
    }
    expect(parse.accountedBytes).toBe(0);
    expect(parse(semicolonText(0))).not.toBe(parse(semicolonText(0)));
    const sixteen = 'SELECT 1;'.repeat(16);
    expect(parse(sixteen)).toBe(parse(sixteen));
    expect(parse(`${sixteen}SELECT 2`)).not.toBe(parse(`${sixteen}SELECT 2`));
  }, 60_000);

  it('keeps texts of many statements under its byte cap when told to keep them', () => {
    const parse = createParseMemo({ maxStatements: Infinity });
    for (let index = 0; index < 200; index += 1) {
      parse(semicolonText(index));
      expect(parse.accountedBytes).toBeLessThanOrEqual(parse.maxBytes);
    }
    // The bound did the work, not the count of entries: far fewer than 200 stayed.
    expect(parse.accountedBytes).toBeGreaterThan(parse.maxBytes / 2);
  }, 60_000);

  it('evicts by bytes: a small cap keeps only the most recent texts', () => {
    const one = estimateEntryBytes(semicolonText(0), parseSql(semicolonText(0)));
    const parse = createParseMemo({ maxBytes: Math.floor(one * 2.5), maxStatements: Infinity });
    const first = parse(semicolonText(0));
    parse(semicolonText(1));
    parse(semicolonText(2));
    expect(parse.accountedBytes).toBeLessThanOrEqual(parse.maxBytes);
    expect(parse(semicolonText(0))).not.toBe(first);
  });

  it('does not keep an entry larger than the whole cap', () => {
    const parse = createParseMemo({ maxBytes: 10_000, maxStatements: Infinity });
    const first = parse(semicolonText(0));
    expect(parse.accountedBytes).toBe(0);
    expect(parse(semicolonText(0))).not.toBe(first);
  });

  it('estimates at least the heap its entries really hold', () => {
    // Measured on the live heap: the estimate must not undercount what the memo pins. What it pins
    // is what dropping it frees; a difference taken across the filling would also count the code
    // the parser compiles meanwhile, which depends on the machine's load (background compilation).
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const warm = createParseMemo({ maxStatements: Infinity });
    for (let index = 0; index < 40; index++) warm(semicolonText(1000 + index));
    const measure = (first: number): { accounted: number; held: number } => {
      let parse: ReturnType<typeof createParseMemo> | undefined = createParseMemo({
        maxStatements: Infinity,
      });
      // Each text made here, so that the memo holds the only reference to it.
      for (let index = first; index < first + 40; index++) parse(semicolonText(index));
      const accounted = parse.accountedBytes;
      gc();
      const withMemo = process.memoryUsage().heapUsed;
      parse = undefined;
      gc();
      return { accounted, held: withMemo - process.memoryUsage().heapUsed };
    };
    // The median of three: on a loaded machine one difference of the heap may be off.
    const samples = [measure(0), measure(100), measure(200)].sort((a, b) => a.held - b.held);
    const { accounted, held } = samples[1] as { accounted: number; held: number };
    expect(accounted).toBeGreaterThanOrEqual(held * 0.9);
    // ...and does not overcount it wildly either, which would waste the bound.
    expect(accounted).toBeLessThan(held * 3);
  });
});
