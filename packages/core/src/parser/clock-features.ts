/**
 * Where a read's text may hand date/time input a clock word (docs/decisions.md 10.36): a string
 * constant that is one, or a cast of a run-time value to a type that may read the clock. Tokens
 * settle the common cases; the syntax tree decides the rest.
 */
import {
  alwaysReadsTheClock,
  DATE_TIME_TYPE_NAMES,
  isClockFreeSpelling,
  isClockFreeTypeName,
  namesTheClock,
} from './clock-inputs';
import type { StatementContext } from './statement-context';
import { fieldsOf, listOf, nameParts, stringOf, unwrapNode, walkTree } from './tree';

export interface ClockFeatures {
  /** The result depends on the moment the statement runs, whatever its parameters are. */
  readsClock: boolean;
  /**
   * A parameter is cast to a type that may read the clock (`$1::timestamptz`, `date($1)`): its
   * value may be read as date/time input whatever type PostgreSQL describes for the parameter.
   */
  castsParameterToClockType: boolean;
}

export const NO_CLOCK: ClockFeatures = { readsClock: false, castsParameterToClockType: false };
const READS_CLOCK: ClockFeatures = { readsClock: true, castsParameterToClockType: false };

/** What a string token tells: a clock word, none, or only the syntax tree can say. */
export type StringClock = 'clock' | 'none' | 'tree';

/**
 * The string token at `i`. Its text is its value unless escapes or a continuation change it
 * (`E'n\ow'`, `E'no\x77'`, `U&'n\006Fw'`, `'n'` newline `'ow'`): continuations and backslash
 * escapes of single characters are decoded here, the rest goes to the tree, whose parser decodes
 * them. A string after `timetz` or `... time zone` is a typed literal that may read the clock
 * (clock-inputs.ts).
 */
export function clockOfString(context: StatementContext, i: number): StringClock {
  const text = context.tokenText(i);
  if (namesTheClock(text)) return 'clock';
  if (context.kind(i) === 'dollar-string') return 'none';
  const prefix = context.letterAt(i);
  if (prefix === 'b' || prefix === 'x') return 'none';
  if (prefix === 'u' || context.isWord(i - 1, 'timetz') || context.isWord(i - 1, 'zone')) {
    return 'tree';
  }
  let value = text;
  const escapes = prefix === 'e' || context.treeMisreadsText;
  if (CONTINUATION.test(text)) {
    // An escaped quote (`\'`) may end a segment's look-alike: the parser tells.
    if (escapes && text.includes('\\')) return 'tree';
    value = text.replace(CONTINUATION_GLUE, '');
  }
  // Escapes: in E'' strings, and in '' strings under standard_conforming_strings off.
  if (escapes && value.includes('\\')) {
    if (CODE_ESCAPE.test(value)) return 'tree';
    value = value.replace(SINGLE_ESCAPE, decodeEscape);
  }
  return value !== text && namesTheClock(value) ? 'clock' : 'none';
}

/** `'n'` newline `'ow'` is one string, `'now'`: the quotes and whitespace between go. */
const CONTINUATION = /'\s/;
const CONTINUATION_GLUE = /'\s+'/g;
/** `\x6e`, `\156`, `\u006e`, `\U0000006e`: a character by its code. */
const CODE_ESCAPE = /\\[0-7xuU]/;
const SINGLE_ESCAPE = /\\(.)/gs;
/** `\n`, `\t`... are control characters (not letters); `\o` is `o`. */
const decodeEscape = (_escape: string, character: string): string =>
  'bfnrt'.includes(character) ? ' ' : character;

/**
 * Whether the type named from token `i` on (after `::` or CAST's AS) is clock-free; false when
 * the tokens cannot tell (`time with time zone`, a user's type).
 */
export function castTargetIsClockFree(context: StatementContext, i: number): boolean {
  let at = i;
  if (context.identifierName(at) === 'pg_catalog' && context.isChar(at + 1, '.')) at += 2;
  const name = context.identifierName(at);
  if (name === undefined) return false;
  return context.kind(at) === 'word' ? isClockFreeSpelling(name) : isClockFreeTypeName(name);
}

/** The token after CAST( ... AS, or undefined when the parentheses hold no AS of their own. */
export function castTypeIndex(context: StatementContext, open: number): number | undefined {
  let depth = 0;
  for (let j = open; j < context.length; j++) {
    if (context.isChar(j, '(')) depth++;
    else if (context.isChar(j, ')')) {
      if (--depth === 0) return undefined;
    } else if (depth === 1 && context.isWord(j, 'as')) return j + 1;
  }
  return undefined;
}

/** Whether a call of `name` is a cast to a date/time type in functional notation (`date(x)`). */
export function isDateTimeCast(name: string, schema?: string): boolean {
  return (schema === undefined || schema === 'pg_catalog') && DATE_TIME_TYPE_NAMES.has(name);
}

/**
 * Whether what the tokens show as a call of `name` may read text known only at run time as input
 * of a type: a cast in functional notation, or XMLTABLE, whose columns read what their paths
 * select from the document as input of their types.
 */
export function mayCastRunTimeText(name: string, schema?: string): boolean {
  return isDateTimeCast(name, schema) || (schema === undefined && name === 'xmltable');
}

/**
 * The clock features of a statement from its tokens, else its syntax tree; an unparsable one
 * counts as reading the clock.
 */
export function clockFeatures(
  tokens: { holdsClockWord: boolean; clockNeedsTree: boolean },
  tree: () => unknown,
): ClockFeatures {
  // Reading the clock anyway, the statement is never cached: its parameters no longer matter.
  if (tokens.holdsClockWord) return READS_CLOCK;
  if (!tokens.clockNeedsTree) return NO_CLOCK;
  const root = tree();
  return root === null ? READS_CLOCK : clockFeaturesFromTree(root);
}

function clockFeaturesFromTree(root: unknown): ClockFeatures {
  const found = { readsClock: false, castsParameterToClockType: false };
  /** A cast to a type that may read the clock, of `argument`. */
  const castOf = (argument: unknown): void => {
    const kind = unwrapNode(argument)?.kind;
    if (kind === 'ParamRef') found.castsParameterToClockType = true;
    // A constant's value is checked where the walk meets it (A_Const below).
    else if (kind !== 'A_Const') found.readsClock = true;
  };
  walkTree(root, (key, fields) => {
    if (key === 'A_Const') {
      const text = stringOf(fieldsOf(fields, 'sval'), 'sval');
      if (text !== undefined && namesTheClock(text)) found.readsClock = true;
    } else if (key === 'TypeCast') {
      const [name, schema] = qualifiedName(listOf(fieldsOf(fields, 'typeName'), 'names'));
      if (alwaysReadsTheClock(name, schema)) found.readsClock = true;
      else if (!isClockFreeTypeName(name, schema)) castOf(fields['arg']);
    } else if (key === 'FuncCall') {
      const [name, schema] = qualifiedName(listOf(fields, 'funcname'));
      if (!isDateTimeCast(name, schema)) return;
      if (alwaysReadsTheClock(name, schema)) found.readsClock = true;
      for (const argument of listOf(fields, 'args')) castOf(argument);
    } else if (key === 'RangeTableFuncCol') {
      // An XMLTABLE column (not FOR ORDINALITY, which has no type) casts the document's text.
      const typeName = fieldsOf(fields, 'typeName');
      if (typeName === null) return;
      const [name, schema] = qualifiedName(listOf(typeName, 'names'));
      if (!isClockFreeTypeName(name, schema)) found.readsClock = true;
    }
  });
  return found;
}

/** The last part of a name list and the part before it (its schema), if any. */
function qualifiedName(list: readonly unknown[]): [name: string, schema: string | undefined] {
  const parts = nameParts(list);
  return [parts[parts.length - 1] ?? '', parts[parts.length - 2]];
}
