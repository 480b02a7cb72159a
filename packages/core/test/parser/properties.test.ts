import fc from 'fast-check';
import type { TokenKind } from '../../src/parser/lexer';
import { tokenize } from './tokenize';
import { loadParser, parseSql, splitSql, UnterminatedTextError } from '../../src/parser';
import { scanStatements } from '../../src/parser/splitter';

beforeAll(() => loadParser());

/** Characters that stress the lexer: quotes, comment starts, semicolons, dollars, astral chars. */
const tricky = fc.string({
  unit: fc.constantFrom(
    'a',
    'Z',
    '1',
    ' ',
    '\n',
    '\t',
    ';',
    "'",
    '"',
    '\\',
    '-',
    '/',
    '*',
    '$',
    '(',
    ')',
    'é',
    '😀',
  ),
  maxLength: 12,
});

const plainString = tricky.map((s) => `'${s.replace(/'/g, "''")}'`);
const escapeString = tricky.map((s) => `E'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`);
const continuedString = fc
  .tuple(tricky, tricky)
  .map(([a, b]) => `'${a.replace(/'/g, "''")}'\n  '${b.replace(/'/g, "''")}'`);
const bitString = fc.constantFrom("B'0101'", "X'1f'");
const quotedIdentifier = tricky.map((s) => `"${s.replace(/"/g, '""')}_"`);
// A `$` followed by a space can neither close the quote nor open another one.
const dollarQuote = fc
  .tuple(fc.constantFrom('', 'fn', '_x1'), tricky)
  .map(([tag, body]) => `$${tag}$${body.replace(/\$/g, '$ ')}$${tag}$`);

const literal = fc.oneof(
  plainString,
  escapeString,
  continuedString,
  bitString,
  quotedIdentifier,
  dollarQuote,
);
const syntax = fc.constantFrom(
  'SELECT',
  'from',
  't1',
  'x$$',
  'CREATE',
  'FUNCTION',
  'BEGIN',
  'ATOMIC',
  'CASE',
  'END',
  '1.5e3',
  '$1',
  '+',
  '-',
  '*',
  '/',
  '<>',
  '||',
  '::',
  '(',
  ')',
  ',',
  ';',
  ';',
  ':v',
  '\\',
);
const comment = fc.constantFrom("-- note ; 'x\n", "/* a ; /* b */ ' */", '--\n');
const whitespace = fc.constantFrom(' ', '\n', '\t \n  ', '\r\n');
const separator = fc.constantFrom('', ' ', ' ', '\n');

/** A random script: fragments joined by random (sometimes empty) separators. */
const script = fc
  .array(fc.tuple(fc.oneof(literal, syntax, comment, whitespace), separator), { maxLength: 40 })
  .map((parts) => parts.map(([fragment, gap]) => fragment + gap).join(''));

type TokenText = `${TokenKind}:${string}`;

/** Random fragments can open a literal or comment they never close (`/` then `*`): refused texts. */
function isComplete(sql: string): boolean {
  return !tokenize(sql).some((t) => t.unterminated);
}

/** Scripts the splitter accepts. */
const completeScript = script.filter(isComplete);

/** Tokens that must survive splitting: everything but comments and `;`. */
function survivingTokens(sql: string): TokenText[] {
  return tokenize(sql)
    .filter((t) => t.kind !== 'comment' && sql.slice(t.start, t.end) !== ';')
    .map((t): TokenText => `${t.kind}:${sql.slice(t.start, t.end)}`);
}

const LITERAL_KINDS: ReadonlySet<TokenKind> = new Set<TokenKind>([
  'string',
  'dollar-string',
  'quoted-ident',
]);

function literals(sql: string): string[] {
  return tokenize(sql)
    .filter((t) => LITERAL_KINDS.has(t.kind))
    .map((t) => sql.slice(t.start, t.end));
}

describe('splitting and normalising, for any script', () => {
  it('never changes the bytes of a literal, quoted identifier or dollar body', () => {
    fc.assert(
      fc.property(completeScript, (sql) => {
        expect(literals(splitSql(sql).join(';\n'))).toEqual(literals(sql));
      }),
      { numRuns: 500 },
    );
  });

  it('splitting then joining keeps every token, in order', () => {
    fc.assert(
      fc.property(completeScript, (sql) => {
        expect(survivingTokens(splitSql(sql).join(';\n'))).toEqual(survivingTokens(sql));
      }),
      { numRuns: 500 },
    );
  });

  it('normalising is idempotent: a statement splits back into itself', () => {
    fc.assert(
      fc.property(completeScript, (sql) => {
        for (const statement of splitSql(sql)) {
          expect(splitSql(statement)).toEqual([statement]);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('normalised statements are trimmed and have no runs of whitespace between tokens', () => {
    fc.assert(
      fc.property(completeScript, (sql) => {
        for (const statement of splitSql(sql)) {
          const tokens = tokenize(statement);
          expect(statement).toBe(statement.trim());
          for (let i = 1; i < tokens.length; i++) {
            const gap = statement.slice(tokens[i - 1]!.end, tokens[i]!.start);
            expect(['', ' ']).toContain(gap);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('refuses exactly the scripts that leave a literal or comment open', () => {
    fc.assert(
      fc.property(script, (sql) => {
        let refused = false;
        try {
          splitSql(sql);
        } catch (error) {
          expect(error).toBeInstanceOf(UnterminatedTextError);
          refused = true;
        }
        expect(refused).toBe(!isComplete(sql));
      }),
      { numRuns: 500 },
    );
  });

  it('executes each statement as written: its sql is a slice of the script that splits back into it', () => {
    fc.assert(
      fc.property(completeScript, (sql) => {
        for (const statement of scanStatements(sql)) {
          const executed = sql.slice(statement.sqlStart, statement.end);
          expect(splitSql(executed)).toEqual([statement.text]);
          expect(executed.endsWith(sql.slice(statement.start, statement.end))).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("maps every character position of a statement's sql back to the same character of the script", () => {
    fc.assert(
      fc.property(completeScript, (sql) => {
        for (const statement of parseSql(sql)) {
          const characters = Array.from(statement.sql);
          let offset = 0;
          for (let position = 1; position <= characters.length; position++) {
            const place = statement.locate(position);
            const character = characters[position - 1]!;
            expect(sql.slice(place.offset, place.offset + character.length)).toBe(character);
            expect(place.offset - (statement.end - statement.sql.length)).toBe(offset);
            offset += character.length;
          }
          expect(statement.locate(characters.length + 1).offset).toBe(statement.end);
        }
      }),
      { numRuns: 300 },
    );
  });
});
