/**
 * Just enough lexing of SQL text for the console's own decisions: where each statement starts and
 * ends (for "the statement under the cursor"), and what its first keyword is (DDL, or a statement
 * that writes). It knows PostgreSQL's quotes, dollar quotes and comments, so a `;` inside them never
 * splits; sqlgate's own splitter (docs/interface.md "From SQL text to statements") stays the judge
 * of what runs. Pure: no DOM.
 */

/** One statement of a text: its place (without the `;`) and its text. */
export interface StatementSpan {
  from: number;
  to: number;
  text: string;
}

const DOLLAR_TAG = /^\$(?:[A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*)?\$/;

/** Where the quoted part, comment or dollar-quoted body starting at `p` ends (exclusive). */
function skipQuoted(text: string, p: number): number {
  const c = text[p];
  if (c === '-' && text[p + 1] === '-') {
    const end = text.indexOf('\n', p);
    return end === -1 ? text.length : end + 1;
  }
  if (c === '/' && text[p + 1] === '*') {
    let depth = 1;
    let q = p + 2;
    while (q < text.length && depth > 0) {
      if (text.startsWith('/*', q)) {
        depth++;
        q += 2;
      } else if (text.startsWith('*/', q)) {
        depth--;
        q += 2;
      } else q++;
    }
    return q;
  }
  if (c === "'" && /[eE]/.test(text[p - 1] ?? '') && !/[\w$]/.test(text[p - 2] ?? '')) {
    // E'…': a backslash escapes the next character, a quote included.
    for (let q = p + 1; q < text.length; q++) {
      if (text[q] === '\\') q++;
      else if (text[q] === "'") {
        if (text[q + 1] !== "'") return q + 1;
        q++;
      }
    }
    return text.length;
  }
  if (c === "'" || c === '"') {
    let q = p + 1;
    for (;;) {
      const end = text.indexOf(c, q);
      if (end === -1) return text.length;
      if (text[end + 1] !== c) return end + 1;
      q = end + 2;
    }
  }
  if (c === '$') {
    const tag = DOLLAR_TAG.exec(text.slice(p, p + 64))?.[0];
    // `$1` is a parameter, and a `$` inside a word (a$b) is part of the word: neither quotes.
    if (tag && !/[\w$]/.test(text[p - 1] ?? '')) {
      const end = text.indexOf(tag, p + tag.length);
      return end === -1 ? text.length : end + tag.length;
    }
  }
  return p;
}

/** Whether the text holds only spaces and comments. */
function isBlank(text: string): boolean {
  return codeOf(text).trim() === '';
}

/** The statements of `text`, in order; empty ones (`;;`, only comments) are left out. */
export function splitStatements(text: string): StatementSpan[] {
  const spans: StatementSpan[] = [];
  let start = 0;
  let p = 0;
  const close = (end: number): void => {
    const piece = text.slice(start, end);
    if (!isBlank(piece)) {
      const lead = piece.length - piece.trimStart().length;
      const trimmed = piece.trim();
      spans.push({ from: start + lead, to: start + lead + trimmed.length, text: trimmed });
    }
  };
  while (p < text.length) {
    const skipped = skipQuoted(text, p);
    if (skipped > p) {
      p = skipped;
    } else if (text[p] === ';') {
      close(p);
      start = p + 1;
      p++;
    } else p++;
  }
  close(text.length);
  return spans;
}

/**
 * The statement to explain: the selection when there is one, else the statement the cursor is in
 * or just after (its `;` included), else the only one; undefined when that leaves nothing.
 */
export function statementAt(text: string, from: number, to: number): string | undefined {
  if (to > from) return splitStatements(text.slice(from, to))[0]?.text;
  const spans = splitStatements(text);
  if (spans.length === 1) return spans[0]?.text;
  const inside = spans.find((span) => from >= span.from && from <= span.to + 1);
  if (inside) return inside.text;
  // Between statements: the one before the cursor, as the eye reads it.
  return [...spans].reverse().find((span) => span.to <= from)?.text ?? spans[0]?.text;
}

/** How many statements the selection holds (1 without a selection): Explain explains the first. */
export function statementsSelected(text: string, from: number, to: number): number {
  return to > from ? splitStatements(text.slice(from, to)).length : 1;
}

/** The text with comments and quoted parts replaced by spaces: what is left is keywords and names. */
export function codeOf(text: string): string {
  let out = '';
  let p = 0;
  while (p < text.length) {
    const skipped = skipQuoted(text, p);
    if (skipped > p) {
      out += ' ';
      p = skipped;
    } else out += text[p++];
  }
  return out;
}

/** The words of a statement's code, lower case. */
export function wordsOf(statement: string): string[] {
  return (
    codeOf(statement)
      .toLowerCase()
      .match(/[a-z_][\w$]*/g) ?? []
  );
}

/** Statements that change the catalog: after one, the schema browser reloads. */
const DDL_KEYWORDS = new Set(['create', 'alter', 'drop', 'comment', 'rename', 'truncate']);

/** Whether any statement of `sql` starts with a DDL keyword (CREATE, ALTER, DROP, COMMENT…). */
export function changesCatalog(sql: string): boolean {
  return splitStatements(sql).some((span) => DDL_KEYWORDS.has(wordsOf(span.text)[0] ?? ''));
}

/** Words that make a WITH … statement write, whatever its last part is. */
const WRITING_WORDS = new Set(['insert', 'update', 'delete', 'merge']);

/**
 * Whether a statement only reads: SELECT, VALUES, TABLE, or WITH … whose parts name no INSERT,
 * UPDATE, DELETE or MERGE. Anything else (and SELECT … INTO, FOR UPDATE) counts as writing, so
 * EXPLAIN ANALYZE of it runs in a transaction that is rolled back.
 */
export function onlyReads(statement: string): boolean {
  const words = wordsOf(statement);
  const first = words[0] ?? '';
  if (first === 'with') return !words.some((word) => WRITING_WORDS.has(word));
  if (!['select', 'values', 'table'].includes(first)) return false;
  if (words.includes('into')) return false;
  return !words.some(
    (word, i) => word === 'for' && /^(update|share|no|key)$/.test(words[i + 1] ?? ''),
  );
}
