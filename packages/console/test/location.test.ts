import fc from 'fast-check';
import { advancePosition, TEXT_START } from '../../core/src/parser/positions';
import { offsetOfLocation } from '../src/browser/location';

describe('offsetOfLocation', () => {
  it('finds lines ended by \\n, \\r\\n and \\r, and columns in characters', () => {
    const text = 'SELECT 1;\r\nSELECT 2;\rSELECT\n  🐘 x';
    expect(offsetOfLocation(text, { line: 1, column: 1 })).toBe(0);
    expect(offsetOfLocation(text, { line: 2, column: 8 })).toBe(text.indexOf('2'));
    expect(offsetOfLocation(text, { line: 3, column: 1 })).toBe(text.indexOf('SELECT\n'));
    // The elephant is two UTF-16 units and one column: x is at column 5.
    expect(offsetOfLocation(text, { line: 4, column: 5 })).toBe(text.indexOf('x'));
  });

  it('clamps a column past its line to the line end, and a line past the text to its end', () => {
    expect(offsetOfLocation('ab\ncd', { line: 1, column: 40 })).toBe(2);
    expect(offsetOfLocation('ab\ncd', { line: 9, column: 1 })).toBe(5);
  });

  // The server computes `location` with core's advancePosition; the console must find the same
  // offset from it, for any text (seeded, so a failure repeats).
  it('inverts the server’s position arithmetic on random texts', () => {
    const piece = fc.constantFrom('a', ' ', '\n', '\r', '\r\n', '🐘', 'é', ';', '\t');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), fc.nat(), (pieces, pick) => {
        const text = pieces.join('');
        // Offsets where a character starts (not inside a surrogate pair or a \r\n).
        const starts = [0];
        for (const part of pieces) starts.push((starts.at(-1) as number) + part.length);
        const between = (p: number): boolean => text[p - 1] === '\r' && text[p] === '\n';
        starts.splice(0, starts.length, ...starts.filter((p) => !between(p)));
        const offset = starts[pick % starts.length] as number;
        const { line, column } = advancePosition(text, TEXT_START, offset);
        expect(offsetOfLocation(text, { line, column })).toBe(offset);
      }),
      { seed: 20261126, numRuns: 2000 },
    );
  });
});
