/**
 * Cuts a stream of text chunks into NDJSON lines; a line may arrive in many chunks. Each chunk is
 * scanned once and the pieces of an unfinished line are joined only when it ends, so a line of
 * many megabytes costs time in proportion to its length, not to its length times its chunks.
 */
export class NdjsonLines {
  private pending: string[] = [];

  /** The lines `chunk` completes; blank lines are skipped. */
  push(chunk: string): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let end = chunk.indexOf('\n'); end !== -1; end = chunk.indexOf('\n', start)) {
      const piece = chunk.slice(start, end);
      const line = this.pending.length === 0 ? piece : this.pending.join('') + piece;
      this.pending = [];
      if (!isBlank(line)) lines.push(line);
      start = end + 1;
    }
    if (start < chunk.length) this.pending.push(chunk.slice(start));
    return lines;
  }

  /** Text after the last newline: a line the stream never finished. */
  rest(): string {
    return this.pending.join('');
  }
}

/** Whether a line holds nothing (NDJSON lines are objects, so a real line starts with '{'). */
function isBlank(line: string): boolean {
  return line.length === 0 || (line.charCodeAt(0) !== 0x7b && line.trim() === '');
}

/**
 * The elements of the JSON array that starts at `start` in `text`, each as its own JSON text. The
 * console parses most of them, but keeps json and jsonb values as PostgreSQL wrote them (sqlgate
 * sends them unparsed): parsing would round big numbers and drop duplicate keys.
 */
export function splitJsonArray(text: string, start: number): string[] {
  if (text.charCodeAt(start) !== 0x5b) throw new Error('Not a JSON array');
  const elements: string[] = [];
  let depth = 0;
  let elementStart = start + 1;
  let inString = false;
  for (let p = start + 1; p < text.length; p++) {
    const c = text[p];
    if (inString) {
      if (c === '\\') p++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '[' || c === '{') depth++;
    else if ((c === ']' || c === '}') && depth > 0) depth--;
    else if (depth === 0 && (c === ',' || c === ']')) {
      // sqlgate writes no space between elements: any space belongs to a json value as
      // PostgreSQL wrote it (' { "a" : 1 } ' keeps its spaces).
      const element = text.slice(elementStart, p);
      if (element.trim() !== '') elements.push(element);
      if (c === ']') return elements;
      elementStart = p + 1;
    }
  }
  throw new Error('Unterminated JSON array');
}
