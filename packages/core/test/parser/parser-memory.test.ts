/**
 * The memory of PostgreSQL's parser (WebAssembly) stays bounded (docs/decisions.md 10.38). The size
 * of a WebAssembly memory is deterministic: it grows, in whole pages, only when what the instance
 * holds no longer fits, and never shrinks.
 */
import { loadParser, parseSql } from '../../src/parser';
import { parserMemoryBytes, TREE_MAX_CHARACTERS } from '../../src/parser/postgres-parser';

beforeAll(() => loadParser());

/** A read whose class needs the syntax tree: it calls a function the lists do not know. */
const callingUnknownFunctions = (count: number): string =>
  `SELECT ${Array.from({ length: count }, (_, index) => `f${index}(x)`).join(', ')} FROM t`;

it('does not give the parser a statement longer than its bound, and classifies it cautiously', async () => {
  const before = parserMemoryBytes();
  // About 2 MB: parsed, it would touch some 180 MB of the parser's memory and keep them.
  const sql = callingUnknownFunctions(200_000);
  expect(sql.length).toBeGreaterThan(TREE_MAX_CHARACTERS);

  const [statement] = parseSql(sql);

  expect(statement).toMatchObject({ statementClass: 'read', changesSession: true });
  expect(statement?.relations.reads).toBeNull();
  await loadParser();
  expect(parserMemoryBytes()).toBe(before);
});

it('leaves nothing behind when a parse fails inside the parser, and goes on parsing', async () => {
  const before = parserMemoryBytes();
  // Nested tens of thousands deep: the parser overflows the stack, which left several MB
  // allocated each time.
  const overflowing = `SELECT f(${'a+'.repeat(30_000)}a) FROM t`;
  expect(overflowing.length).toBeLessThan(TREE_MAX_CHARACTERS);

  for (let attempt = 0; attempt < 40; attempt++) {
    const [statement] = parseSql(overflowing);
    expect(statement).toMatchObject({ statementClass: 'read', changesSession: true });
    expect(statement?.relations.reads).toBeNull();
  }

  await loadParser();
  expect(parserMemoryBytes()).toBe(before);
  const [after] = parseSql('SELECT a FROM t JOIN u USING (id)');
  expect(after?.relations.reads).toEqual(['t', 'u']);
});
