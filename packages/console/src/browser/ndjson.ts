/** Cuts a stream of text chunks into NDJSON lines; a line may arrive in several chunks. */
export class NdjsonLines {
  private pending = '';

  /** The complete lines of `chunk` and what came before it; blank lines are skipped. */
  push(chunk: string): string[] {
    const text = this.pending + chunk;
    const lines = text.split('\n');
    this.pending = lines.pop() ?? '';
    return lines.filter((line) => line.trim() !== '');
  }

  /** Text after the last newline: a line the stream never finished. */
  rest(): string {
    return this.pending;
  }
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
      const element = text.slice(elementStart, p).trim();
      if (element !== '') elements.push(element);
      if (c === ']') return elements;
      elementStart = p + 1;
    }
  }
  throw new Error('Unterminated JSON array');
}
