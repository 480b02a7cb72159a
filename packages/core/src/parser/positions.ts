import type { SourcePosition } from './types';

const NEWLINE = 10;
const CARRIAGE_RETURN = 13;

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** The position at the start of a text. */
export const TEXT_START: SourcePosition = { offset: 0, line: 1, column: 1 };

/**
 * Walks from `from` to the UTF-16 offset `to`. Lines end at `\n`, `\r\n` or `\r`; columns count
 * characters as PostgreSQL does, not UTF-16 code units.
 */
export function advancePosition(text: string, from: SourcePosition, to: number): SourcePosition {
  let { line, column } = from;
  let p = from.offset;
  while (p < to) {
    const c = text.charCodeAt(p);
    if (c === NEWLINE || (c === CARRIAGE_RETURN && text.charCodeAt(p + 1) !== NEWLINE)) {
      line++;
      column = 1;
    } else if (
      c !== CARRIAGE_RETURN &&
      !(isLowSurrogate(c) && isHighSurrogate(text.charCodeAt(p - 1)))
    ) {
      column++;
    }
    p++;
  }
  return { offset: to, line, column };
}

/**
 * Gives positions for increasing offsets in O(text length) overall, by walking on from the last
 * position asked for.
 */
export class PositionTracker {
  private last: SourcePosition = TEXT_START;

  constructor(private readonly text: string) {}

  at(offset: number): SourcePosition {
    const from = offset >= this.last.offset ? this.last : TEXT_START;
    this.last = advancePosition(this.text, from, offset);
    return this.last;
  }
}

/**
 * The UTF-16 offset of PostgreSQL's 1-based character `position` counted from `from` (PostgreSQL
 * counts characters, so a surrogate pair is one position), clamped to `limit`.
 */
export function offsetOfCharacter(
  text: string,
  position: number,
  from = 0,
  limit = text.length,
): number {
  const wanted = Number.isFinite(position) ? Math.max(0, Math.floor(position) - 1) : 0;
  let offset = from;
  for (let counted = 0; counted < wanted && offset < limit; counted++) {
    offset +=
      isHighSurrogate(text.charCodeAt(offset)) && isLowSurrogate(text.charCodeAt(offset + 1))
        ? 2
        : 1;
  }
  return Math.min(offset, limit);
}
