import {
  castTargetIsClockFree,
  castTypeIndex,
  clockOfString,
  mayCastRunTimeText,
} from './clock-features';
import type { FunctionCall, StatementFeatures } from './features';
import { functionEffect, isVolatileWord, VOLATILE_KEYWORDS } from './side-effect-functions';
import type { StatementContext } from './statement-context';

export interface TokenFeatures extends StatementFeatures {
  /**
   * The tokens cannot settle the features (a keyword that may be a CTE or a column, a word before
   * `(`, set_config()'s scope): the syntax tree decides.
   */
  needsTree: boolean;
  /** A string constant holds a clock word (`'now'`, `date 'today'`): see clock-inputs.ts. */
  holdsClockWord: boolean;
  /**
   * The tokens cannot rule out that date/time input reads a clock word (a cast to such a type, a
   * string only the parser decodes): the syntax tree decides (clock-features.ts).
   */
  clockNeedsTree: boolean;
}

/**
 * Reserved and column-name keywords, never a function name to the grammar (`IN (`, `EXISTS (`);
 * before `(`, any other keyword leaves it to the syntax tree.
 */
const NEVER_A_FUNCTION = new Set(
  `all and any array as asc between both case cast check collate column constraint create default
  desc distinct do else end except exists fetch for foreign from grant group having in intersect
  into lateral leading limit not null offset on only or order placing primary references returning
  row select some symmetric table then to trailing union unique using values variadic when where
  window with`
    .trim()
    .split(/\s+/),
);

/** Window-clause words that follow the `)` of a call: `count(*) FILTER (...) OVER (...)`. */
const AFTER_CALL_CLAUSES = new Set(['over', 'filter', 'within']);

/** Reads the features of the statement whose tokens start at `from`. */
export function featuresFromTokens(context: StatementContext, from = 0): TokenFeatures {
  const features: TokenFeatures = {
    calls: [],
    mentionsVolatileWord: false,
    modifiesData: false,
    selectInto: 'none',
    locksRows: false,
    needsTree: false,
    holdsClockWord: false,
    clockNeedsTree: false,
  };
  for (let i = from; i < context.length; i++) {
    const kind = context.kind(i);
    if (kind === 'string' || kind === 'dollar-string') {
      const clock = clockOfString(context, i);
      if (clock === 'clock') features.holdsClockWord = true;
      else if (clock === 'tree') features.clockNeedsTree = true;
      continue;
    }
    if (kind === 'punctuation') {
      if (isCastOperator(context, i) && !castTargetIsClockFree(context, i + 1)) {
        features.clockNeedsTree = true;
      }
      continue;
    }
    if (kind === 'word') {
      const keyword = featureKeywordAt(context, i);
      if (keyword === 'cast') {
        const type = castTypeIndex(context, i + 1);
        if (type === undefined || !castTargetIsClockFree(context, type)) {
          features.clockNeedsTree = true;
        }
      } else if (keyword === 'for') {
        const lockWords = rowLockWords(context, i + 1);
        if (lockWords > 0) {
          features.locksRows = true;
          i += lockWords;
          continue;
        }
      } else if (keyword === 'modify') {
        features.modifiesData = true;
      } else if (keyword === 'into') {
        if (!context.isWord(i - 1, 'insert') && !context.isWord(i - 1, 'merge')) {
          features.selectInto = intoTargetIsTemporary(context, i + 1) ? 'temporary-table' : 'table';
        }
      } else if (keyword === 'maybe-volatile' && isVolatileWord(context.word(i)!)) {
        features.mentionsVolatileWord = true;
      }
    } else if (kind !== 'quoted-ident') continue;
    if (!context.isChar(i + 1, '(')) continue;
    const call = callAt(context, i);
    if (call === null) continue;
    features.calls.push(call);
    if (call.name === 'set_config' || functionEffect(call.name, call.schema) === 'unknown') {
      features.needsTree = true;
    } else if (mayCastRunTimeText(call.name, call.schema)) features.clockNeedsTree = true;
  }
  if (features.modifiesData) features.needsTree = true;
  return features;
}

/**
 * The word at `i` if it matters to the features. Classification runs this on every word of every
 * statement, so it looks at the length and first letter before comparing whole words.
 */
function featureKeywordAt(
  context: StatementContext,
  i: number,
): 'for' | 'into' | 'cast' | 'modify' | 'maybe-volatile' | null {
  const length = context.tokenLength(i);
  const first = context.letterAt(i);
  if (length === 3) return first === 'f' && context.isWord(i, 'for') ? 'for' : null;
  if (length === 4) {
    if (first === 'i') return context.isWord(i, 'into') ? 'into' : null;
    return first === 'c' && context.isWord(i, 'cast') ? 'cast' : null;
  }
  if (length === 5) return first === 'm' && context.isWord(i, 'merge') ? 'modify' : null;
  if (length === 6) {
    const modifies =
      (first === 'i' && context.isWord(i, 'insert')) ||
      (first === 'u' && context.isWord(i, 'update')) ||
      (first === 'd' && context.isWord(i, 'delete'));
    return modifies ? 'modify' : null;
  }
  if (length < 7) return null;
  const second = context.letterAt(i, 1);
  const start = first + second;
  return start === 'cu' || start === 'lo' || start === 'pg' || start === 'ta'
    ? 'maybe-volatile'
    : null;
}

/** The call whose name is the token at `i` (followed by `(`), or null if the word is syntax. */
function callAt(context: StatementContext, i: number): FunctionCall | null {
  const name = context.identifierName(i);
  if (name === undefined) return null;
  if (context.kind(i) === 'word') {
    if (NEVER_A_FUNCTION.has(name) || VOLATILE_KEYWORDS.has(name)) return null;
    if (AFTER_CALL_CLAUSES.has(name) && context.isChar(i - 1, ')')) return null;
    if (name === 'materialized' && (context.isWord(i - 1, 'as') || context.isWord(i - 1, 'not'))) {
      return null;
    }
  }
  if (context.isChar(i - 1, '.')) {
    const schema = context.identifierName(i - 2);
    if (schema !== undefined) {
      return isInsertTarget(context, i - 2) ? null : { name, schema };
    }
  }
  return isInsertTarget(context, i) ? null : { name };
}

/**
 * `INSERT INTO t (a, b)`, `MERGE INTO s.t`: the name after INTO is a relation and its parentheses
 * a column list, never a call. Deciding it here spares the syntax tree for most INSERTs.
 */
function isInsertTarget(context: StatementContext, nameStart: number): boolean {
  return context.isWord(nameStart - 1, 'into');
}

/** The token at `i` is `::`. */
function isCastOperator(context: StatementContext, i: number): boolean {
  return (
    context.tokenLength(i) === 2 && context.letterAt(i) === ':' && context.letterAt(i, 1) === ':'
  );
}

/** Number of words after FOR that make a row-locking clause (UPDATE, NO KEY UPDATE...), or 0. */
function rowLockWords(context: StatementContext, i: number): number {
  if (context.isWord(i, 'update') || context.isWord(i, 'share')) return 1;
  if (context.isWord(i, 'key') && context.isWord(i + 1, 'share')) return 2;
  if (context.isWord(i, 'no') && context.isWord(i + 1, 'key') && context.isWord(i + 2, 'update'))
    return 3;
  return 0;
}

/** SELECT ... INTO [GLOBAL|LOCAL] TEMP[ORARY] [TABLE] t, or INTO pg_temp.t. */
function intoTargetIsTemporary(context: StatementContext, i: number): boolean {
  if (context.isWord(i, 'local') || context.isWord(i, 'global')) i++;
  if (context.isWord(i, 'temp') || context.isWord(i, 'temporary')) return true;
  return context.identifierName(i) === 'pg_temp' && context.isChar(i + 1, '.');
}
