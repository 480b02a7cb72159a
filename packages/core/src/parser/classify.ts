import { clockFeatures, NO_CLOCK } from './clock-features';
import {
  effectOfCall,
  summariseCalls,
  type FunctionCall,
  type StatementFeatures,
} from './features';
import { relationsFromTree } from './relations';
import { updatesSettingsView } from './settings-view';
import type { StatementSpan, TokenStore } from './splitter';
import { StatementContext } from './statement-context';
import {
  classOfAlter,
  classOfCluster,
  classOfCreate,
  classOfDrop,
  classOfReindex,
  copyUnsupportedReason,
} from './statement-rules';
import { featuresFromTokens } from './token-features';
import { fieldsOf, parseStatementTree, unwrapNode } from './tree';
import { featuresFromTree } from './tree-features';
import type { StatementClass, StatementRelations } from './types';

/** Everything the parser tells about one statement besides its text and positions. */
export interface Classification {
  /** First keyword, upper-cased; empty when the statement does not start with one. */
  keyword: string;
  statementClass: StatementClass;
  changesSession: boolean;
  callsVolatileFunction: boolean;
  castsParameterToClockType: boolean;
  unsupported: string | null;
  /** Classification parsed the syntax tree (tokens could not decide). */
  usedTree: boolean;
  /** Computes the relations read and written (parses the syntax tree); the caller keeps the result. */
  relations(): StatementRelations;
}

/** What each rule decides of a Classification. */
type Verdict = Omit<Classification, 'keyword' | 'usedTree' | 'relations'>;

const TRANSACTION_CONTROL = new Set(
  'begin start commit end rollback abort savepoint release'.split(' '),
);
/** Statements whose effect is the connection's state: settings, prepared statements, cursors... */
const SESSION = new Set(
  'set reset listen unlisten deallocate declare load close fetch move'.split(' '),
);
const QUERIES = new Set(['select', 'values', 'table', 'with']);
/**
 * The writes that may keep the connection clean: their own effect is on data, so only the functions
 * they call can change the session (docs/decisions.md 10.15).
 */
const DATA_MODIFYING = new Set(['insert', 'update', 'delete', 'merge']);

/** Returns the syntax tree of the statement being classified (for EXPLAIN: of the inner one). */
type TreeAccess = () => unknown;

/**
 * Classifies one normalised statement (docs/decisions.md section 1). Tokens decide wherever they can;
 * the syntax tree is parsed only for what they cannot tell. When unsure, the statement is a write.
 * `tokens`: where the splitter stored the statement's tokens, to save lexing `text` again.
 */
export function classifyStatement(
  text: string,
  tokens?: { store: TokenStore; span: StatementSpan },
): Classification {
  const context = new StatementContext(text, tokens);
  const first = firstWordIndex(context);
  const verdict = withUnicodeEscapes(
    text,
    classifyFrom(context, first, () => context.syntaxTree()),
  );
  return {
    keyword: context.word(first)?.toUpperCase() ?? '',
    ...verdict,
    usedTree: context.treeWasParsed,
    relations: relationsOnDemand(context.treeMisreadsText ? null : text, verdict.statementClass),
  };
}

/**
 * A Unicode-escape identifier (`U&"set\005fconfig"`) can name any function while its text names
 * none the lists know: the statement counts as changing the session and as volatile, so its
 * connection is cleaned and its result never cached (docs/decisions.md 10.15).
 */
function withUnicodeEscapes<T extends { changesSession: boolean; callsVolatileFunction: boolean }>(
  text: string,
  verdict: T,
): T {
  if (!/u&"/i.test(text)) return verdict;
  return { ...verdict, changesSession: true, callsVolatileFunction: true };
}

/**
 * Relations parse the tree again when asked (only the cache asks; trees dwarf their text), in a
 * scope of their own so the closure keeps no tokens alive.
 */
function relationsOnDemand(
  text: string | null,
  statementClass: StatementClass,
): () => StatementRelations {
  return () => relationsFromTree(text === null ? null : parseStatementTree(text), statementClass);
}

/** `(SELECT 1) UNION (SELECT 2)` starts with its keyword after the parentheses. */
function firstWordIndex(context: StatementContext): number {
  let i = 0;
  while (context.isChar(i, '(')) i++;
  return i;
}

function classifyFrom(context: StatementContext, from: number, tree: TreeAccess): Verdict {
  const keyword = context.word(from);
  if (keyword === undefined) return unsure();
  if (QUERIES.has(keyword)) return classifyQuery(context, from, tree);
  if (keyword === 'explain') return classifyExplain(context, from, tree);
  if (keyword === 'show') return plain(context, from, 'read', { volatile: true });
  if (TRANSACTION_CONTROL.has(keyword)) return plain(context, from, 'transaction-control');
  if (keyword === 'prepare') {
    return plain(
      context,
      from,
      context.word(from + 1) === 'transaction' ? 'transaction-control' : 'session',
    );
  }
  if (SESSION.has(keyword)) return plain(context, from, 'session');
  if (keyword === 'discard') {
    return plain(context, from, context.word(from + 1) === 'all' ? 'no-transaction' : 'session');
  }
  if (keyword === 'vacuum') return plain(context, from, 'no-transaction');
  if (keyword === 'create') return plain(context, from, classOfCreate(context, from));
  if (keyword === 'drop') return plain(context, from, classOfDrop(context, from));
  if (keyword === 'alter') return plain(context, from, classOfAlter(context, from));
  if (keyword === 'reindex') return plain(context, from, classOfReindex(context, from));
  if (keyword === 'cluster') return plain(context, from, classOfCluster(context, from));
  if (keyword === 'copy') {
    return { ...plain(context, from, 'write'), unsupported: copyUnsupportedReason(context, from) };
  }
  if (DATA_MODIFYING.has(keyword)) return dataModifying(context, from);
  // DDL, GRANT, COMMENT, ANALYZE, TRUNCATE, CALL, DO, EXECUTE...
  return plain(context, from, 'write');
}

function unsure(): Verdict {
  return {
    statementClass: 'write',
    changesSession: true,
    callsVolatileFunction: true,
    castsParameterToClockType: false,
    unsupported: null,
  };
}

/**
 * A statement whose class the keyword rules decided. Anything but a read (SHOW) counts as a session
 * change. Unknown names before `(` are not counted as volatile here: outside queries they are mostly
 * table names with column lists, and only reads are ever cached.
 */
function plain(
  context: StatementContext,
  from: number,
  statementClass: StatementClass,
  options: { volatile?: boolean } = {},
): Verdict {
  const features = featuresFromTokens(context, from);
  const calls = callsOf(context, features.calls);
  const knownCalls = summariseCalls(calls.filter((call) => effectOfCall(call) !== 'unknown'));
  return {
    statementClass,
    // Only reads and the data-modifying writes (see dataModifying) can leave the session clean:
    // DO and CALL run code that may SET, lock or create temp tables, DDL may fire event triggers
    // (docs/decisions.md 10.15).
    changesSession: statementClass !== 'read' || knownCalls.changesSession,
    callsVolatileFunction:
      options.volatile === true ||
      features.mentionsVolatileWord ||
      features.holdsClockWord ||
      knownCalls.callsVolatileFunction,
    castsParameterToClockType: false,
    unsupported: null,
  };
}

/** The calls, from the tree when set_config() is among them: its literal third argument decides its scope. */
function callsOf(context: StatementContext, calls: FunctionCall[]): FunctionCall[] {
  if (!calls.some((call) => call.name === 'set_config')) return calls;
  const tree = context.syntaxTree();
  return tree === null ? calls : featuresFromTree(tree).calls;
}

/**
 * INSERT, UPDATE, DELETE, MERGE keep the session clean only when every function they call is a
 * known built-in without session effects and none UPDATEs pg_settings (docs/decisions.md 10.15). A
 * word before `(` may be a column list: an unknown one is checked in the tree (unparsable: changed).
 */
function dataModifying(context: StatementContext, from: number): Verdict {
  const features = featuresFromTokens(context, from);
  let calls = callsOf(context, features.calls);
  let proven = true;
  if (calls.some((call) => effectOfCall(call) === 'unknown')) {
    const tree = context.syntaxTree();
    if (tree === null) proven = false;
    else calls = featuresFromTree(tree).calls;
  }
  const summary = summariseCalls(calls);
  return {
    statementClass: 'write',
    changesSession:
      !proven ||
      summary.changesSession ||
      summary.callsUnknownFunction ||
      updatesSettingsView(context),
    callsVolatileFunction:
      features.mentionsVolatileWord || features.holdsClockWord || summary.callsVolatileFunction,
    castsParameterToClockType: false,
    unsupported: null,
  };
}

/** SELECT, VALUES, TABLE, WITH: a read unless something in it writes or locks. */
function classifyQuery(context: StatementContext, from: number, tree: TreeAccess): Verdict {
  const tokenFeatures = featuresFromTokens(context, from);
  let features: StatementFeatures = tokenFeatures;
  if (tokenFeatures.needsTree) {
    const root = tree();
    if (root !== null) {
      features = {
        ...featuresFromTree(root),
        mentionsVolatileWord: tokenFeatures.mentionsVolatileWord,
      };
    }
  }
  const calls = summariseCalls(features.calls);
  const writes =
    features.modifiesData ||
    features.locksRows ||
    features.selectInto === 'table' ||
    calls.hasSideEffect;
  const temporary = features.selectInto === 'temporary-table';
  // Only a read is ever cached: what else it may read from the clock does not matter.
  const clock = writes || temporary ? NO_CLOCK : clockFeatures(tokenFeatures, tree);
  return {
    statementClass: writes ? 'write' : temporary ? 'session' : 'read',
    // A user-defined or unknown function may SET, lock or create temp tables (docs/decisions.md
    // 10.15); SELECT ... INTO is a CREATE TABLE, not a read; pg_settings' UPDATE rule SETs.
    changesSession:
      calls.changesSession ||
      calls.callsUnknownFunction ||
      features.selectInto !== 'none' ||
      (features.modifiesData && updatesSettingsView(context)),
    callsVolatileFunction:
      features.mentionsVolatileWord || calls.callsVolatileFunction || clock.readsClock,
    castsParameterToClockType: clock.castsParameterToClockType,
    unsupported: null,
  };
}

/**
 * EXPLAIN only plans its statement (a read) unless ANALYZE runs it, as the inner statement, with
 * output never the same twice. A plan shows a clock word's value at planning time.
 */
function classifyExplain(context: StatementContext, from: number, tree: TreeAccess): Verdict {
  let i = from + 1;
  let analyze = false;
  if (context.isChar(i, '(')) {
    analyze = explainOptionsAnalyze(context, i);
    i = context.skipParentheses(i);
  } else {
    for (
      let word = context.word(i);
      word === 'analyze' || word === 'analyse' || word === 'verbose';
      word = context.word(++i)
    ) {
      if (word !== 'verbose') analyze = true;
    }
  }
  if (!analyze) {
    const clock = clockFeatures(featuresFromTokens(context, i), tree);
    return {
      statementClass: 'read',
      changesSession: false,
      callsVolatileFunction: clock.readsClock,
      castsParameterToClockType: clock.castsParameterToClockType,
      unsupported: null,
    };
  }
  const inner = classifyFrom(context, i, () => {
    const root = unwrapNode(tree());
    return root?.kind === 'ExplainStmt' ? (fieldsOf(root.fields, 'query') ?? null) : null;
  });
  return { ...inner, callsVolatileFunction: true };
}

/** `EXPLAIN (ANALYZE [boolean], ...)`: the value may be omitted, or true/on/1, or false/off/0. */
function explainOptionsAnalyze(context: StatementContext, open: number): boolean {
  const close = context.skipParentheses(open) - 1;
  let analyze = false;
  for (let i = open + 1; i < close; i++) {
    // An option's name starts the list or follows a comma; it may be quoted ("analyze").
    if (i !== open + 1 && !context.isChar(i - 1, ',')) continue;
    const option = context.identifierName(i)?.toLowerCase();
    if (option !== 'analyze' && option !== 'analyse') continue;
    // The last ANALYZE wins, as in PostgreSQL: `(ANALYZE false, ANALYZE)` runs the statement.
    if (i + 1 >= close || context.isChar(i + 1, ',')) {
      analyze = true;
      continue;
    }
    const text = context
      .tokenText(i + 1)
      .replace(/['"]/g, '')
      .toLowerCase();
    // PostgreSQL rejects other values, so anything else fails before it runs anything.
    analyze = text !== 'false' && text !== 'off' && text !== '0';
  }
  return analyze;
}
