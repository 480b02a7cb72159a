/**
 * Names the top-level fields of a request body that its schema does not know, with a suggestion
 * for a likely misspelling. Unknown fields are ignored and never reach the driver (docs/decisions.md
 * 3, docs/interface.md QueryRequest); the request still runs, and the caller learns that `maxrows`
 * did nothing.
 */

/** Edit distance bound for a suggestion: a typo, not a different word. */
const MAX_SUGGESTION_DISTANCE = 2;

/** Levenshtein distance, stopping early once it exceeds `limit` (names are short). */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMinimum = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      current.push(value);
      rowMinimum = Math.min(rowMinimum, value);
    }
    if (rowMinimum > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length]!;
}

/** The known field `name` was probably meant to be: same letters in another case, or a near spelling. */
export function suggestField(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const sameLetters = known.find((field) => field.toLowerCase() === lower);
  if (sameLetters) return sameLetters;
  let best: string | undefined;
  let bestDistance = MAX_SUGGESTION_DISTANCE + 1;
  for (const field of known) {
    const distance = editDistance(lower, field.toLowerCase(), MAX_SUGGESTION_DISTANCE);
    if (distance < bestDistance) {
      best = field;
      bestDistance = distance;
    }
  }
  return best;
}

/** The most characters of a field's name that a message shows: a name is no payload to echo. */
const SHOWN_NAME_CHARACTERS = 64;

/**
 * A field's name as a message shows it: whole up to 64 characters, else its first 64 and `…`.
 * Characters are counted as code points, so a surrogate pair is never cut in two.
 */
export function shownFieldName(name: string): string {
  if (name.length <= SHOWN_NAME_CHARACTERS) return name;
  let characters = 0;
  let end = 0;
  for (const character of name) {
    if (characters === SHOWN_NAME_CHARACTERS) return `${name.slice(0, end)}…`;
    characters++;
    end += character.length;
  }
  return name;
}

/**
 * One warning per field of `body` outside `known`, e.g. "unknown field 'maxrows' (did you mean
 * 'maxRows'?)"; undefined when every field is known. That is the common case on the hot path of
 * POST /api/query, so it allocates nothing and costs one set lookup per field. `checkName`, when
 * given, sees each unknown name first and throws to refuse the body (request-bodies.ts refuses
 * names holding a NUL or a lone surrogate).
 */
export function unknownFieldWarnings(
  body: Record<string, unknown>,
  known: ReadonlySet<string>,
  checkName?: (name: string) => void,
): string[] | undefined {
  let warnings: string[] | undefined;
  // for...in allocates no array of keys; inherited names are skipped below, only when unknown.
  for (const name in body) {
    if (known.has(name) || !Object.prototype.hasOwnProperty.call(body, name)) continue;
    checkName?.(name);
    const shown = shownFieldName(name);
    const suggestion = suggestField(name, [...known]);
    (warnings ??= []).push(
      suggestion === undefined
        ? `unknown field '${shown}'`
        : `unknown field '${shown}' (did you mean '${suggestion}'?)`,
    );
  }
  return warnings;
}
