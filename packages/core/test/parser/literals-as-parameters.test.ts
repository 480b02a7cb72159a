import fc from 'fast-check';
import { splitSql, withLiteralsAsParameters } from '../../src/parser';

describe('withLiteralsAsParameters', () => {
  it.each([
    ['SELECT 1', 'SELECT $1'],
    ["SELECT * FROM t WHERE id = 42 AND name = 'x'", 'SELECT * FROM t WHERE id = $1 AND name = $2'],
    ["SELECT E'a\\'b', B'101', X'ff', U&'d\\0061t'", 'SELECT $1, $2, $3, $4'],
    ['SELECT $$dollar$$, $tag$x$tag$', 'SELECT $1, $2'],
    ['SELECT 1.5e10, .5, 0x1F', 'SELECT $1, $2, $3'],
    ["SELECT interval '1 day', '2024-01-01'::date", 'SELECT interval $1, $2::date'],
    ['SELECT -1', 'SELECT -$1'],
    ["ALTER ROLE app PASSWORD 'hunter2'", 'ALTER ROLE app PASSWORD $1'],
    // The statement's own parameters keep their numbers; literals are numbered after them.
    ["SELECT $2, 'a', $1", 'SELECT $2, $3, $1'],
    // Identifiers, quoted or not, are not literals; neither are keywords.
    [
      'SELECT "col 1", t1.a2 FROM t1 WHERE b IS NULL AND c = true',
      'SELECT "col 1", t1.a2 FROM t1 WHERE b IS NULL AND c = true',
    ],
    // A backslash in a '...' string: its end depends on standard_conforming_strings, so nothing
    // from there on is shown when the two readings differ.
    ["SELECT 1, 'It\\'s', 'pw hunter2', 'Bob\\'s'", 'SELECT $1, $2 …'],
    ["SELECT '\\' || SECRET56 || ' AS c -- '\n, 1", 'SELECT $1 …'],
    // Both readings agree (the backslash is not before a quote): replaced as usual.
    ["SELECT 'C:\\dir', 2", 'SELECT $1, $2'],
    // Segments continued over a line break are one literal.
    ["SELECT 'a'\n'b'", 'SELECT $1'],
  ])('%s → %s', (text, expected) => {
    expect(withLiteralsAsParameters(text)).toBe(expected);
  });

  it('leaves no quote of a literal behind, whatever the text (property)', () => {
    const literal = fc.oneof(
      fc.string().map((s) => `'${s.replaceAll("'", "''")}'`),
      fc.nat().map(String),
      fc
        .string()
        .filter((s) => !s.includes('$q$'))
        .map((s) => `$q$${s}$q$`),
    );
    fc.assert(
      fc.property(fc.array(literal, { minLength: 1, maxLength: 5 }), (literals) => {
        const text = `SELECT ${literals.join(', ')}`;
        const [statement] = splitSql(text);
        const replaced = withLiteralsAsParameters(statement ?? '');
        const expected = `SELECT ${literals.map((_, i) => `$${i + 1}`).join(', ')}`;
        // A backslash in a '...' string may end the text early, never show more.
        if (replaced.endsWith(' …')) expect(expected.startsWith(replaced.slice(0, -2))).toBe(true);
        else expect(replaced).toBe(expected);
      }),
      { seed: 18, numRuns: 500 },
    );
  });
});
