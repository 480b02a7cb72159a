/**
 * What a request that runs as a role (docs/decisions.md 12) may not hold: anything that would
 * leave that role, or change the claims it runs with, for the rest of the request or for later
 * requests on its connection. PostgreSQL lets any statement go back to the login (the session
 * user), so sqlgate refuses these before anything runs:
 * - `SET`/`RESET` of `role`, `session_authorization`, a `request.` setting (the claims),
 *   `statement_timeout` (the credentials' timeoutMs) or a setting that changes how later text is
 *   read (`standard_conforming_strings`, `backslash_quote`, `client_encoding`), in any spelling,
 *   also as a function's or a role's `SET` clause; `RESET ALL`; `DISCARD ALL`;
 * - `set_config()` of those settings, or of a name that is not a plain string literal;
 * - an `UPDATE` of `pg_settings` (its rule calls set_config());
 * - `set_config` named anywhere but in a call checked above (an aggregate's or operator's
 *   function, a cast's);
 * - built-ins that run SQL text given as a value (`query_to_xml()`, `ts_stat()`...): the guard
 *   cannot read that text;
 * - code whose body the parser cannot see into: `DO` blocks, `CREATE FUNCTION` / `PROCEDURE`;
 *   and statements that bind a function into the catalog (`CREATE AGGREGATE`, `OPERATOR`,
 *   `CAST`...), which may name it by a string constant the guard cannot match;
 * - a `U&"..."` name, which may spell any of the above in escapes.
 * A statement PostgreSQL's grammar cannot read is refused too: its reach is unknown.
 */
import { fieldsOf, listOf, stringOf, unwrapNode, walkTree } from './tree';
import { StatementContext } from './statement-context';
import { updatesSettingsView } from './settings-view';
import type { ParsedStatement } from './types';

/**
 * Built-ins that run SQL text they are given (PostgreSQL 15's catalog, and dblink's): a statement
 * naming one is refused, whatever the text holds.
 */
const SQL_TEXT_RUNNERS = new Set([
  'query_to_xml',
  'query_to_xmlschema',
  'query_to_xml_and_xmlschema',
  'cursor_to_xml',
  'cursor_to_xmlschema',
  'ts_stat',
  'ts_rewrite',
  'dblink',
  'dblink_exec',
  'dblink_open',
  'dblink_send_query',
]);

/** Words without which a statement can do none of the above (a prefilter: no syntax tree needed). */
const RISKY_NAMES = new Set([
  'set',
  'reset',
  'set_config',
  'discard',
  'do',
  'function',
  'procedure',
  'pg_settings',
]);

/**
 * Settings that decide who the statements run as and the claims they see; the time they may take,
 * which is the credentials' to set (their timeoutMs); and how the server reads the text of the
 * statements after them. This guard reads a request's statements before any runs: a later
 * statement read with backslash escapes, or in another encoding, than the guard read it with could
 * hide a call in what the guard took for a string.
 */
const PROTECTED_SETTINGS = new Set([
  'role',
  'session_authorization',
  'statement_timeout',
  'standard_conforming_strings',
  'backslash_quote',
  'client_encoding',
]);

function isProtectedSetting(name: string): boolean {
  const lower = name.toLowerCase();
  return PROTECTED_SETTINGS.has(lower) || lower.startsWith('request.');
}

/**
 * Code kept as text, run later, and statements that bind a function into the catalog by a name
 * that may be a string constant in any spelling (`sfunc = E'\\163et_config'`): what they run
 * cannot be read from the statement.
 */
const OPAQUE_CODE: Readonly<Record<string, string>> = {
  DoStmt: 'a DO block',
  CreateFunctionStmt: 'CREATE FUNCTION or PROCEDURE',
  DefineStmt: 'CREATE AGGREGATE, OPERATOR, TYPE or COLLATION',
  AlterOperatorStmt: 'ALTER OPERATOR',
  AlterTypeStmt: 'ALTER TYPE ... SET',
  CreateRangeStmt: 'CREATE TYPE ... AS RANGE',
  CreateCastStmt: 'CREATE CAST',
  CreateConversionStmt: 'CREATE CONVERSION',
  CreateOpClassStmt: 'CREATE OPERATOR CLASS',
  CreateTransformStmt: 'CREATE TRANSFORM',
  CreatePLangStmt: 'CREATE LANGUAGE',
  CreateFdwStmt: 'CREATE FOREIGN DATA WRAPPER',
  CreateAmStmt: 'CREATE ACCESS METHOD',
  CreateEventTrigStmt: 'CREATE EVENT TRIGGER',
};

/**
 * Why `statement` could leave the request's role or change its claims, or undefined when it
 * cannot be seen to.
 */
export function roleChangeIn(statement: ParsedStatement): string | undefined {
  const context = new StatementContext(statement.text);
  const names = namesOf(context);
  if (names.escaped) return 'a U&"..." name';
  if (names.runsSqlText !== undefined) return `${names.runsSqlText}(), which runs SQL text`;
  // DDL may name a function by a string constant (`sfunc = 'set_config'`): its tree is read.
  const ddl = statement.keyword === 'CREATE' || statement.keyword === 'ALTER';
  if (!names.risky && !ddl) return undefined;
  const tree = context.syntaxTree();
  if (tree === null) return 'a statement the parser cannot read';
  if (updatesSettingsView(context)) return 'an UPDATE of pg_settings';
  let found: string | undefined;
  let setConfigCalls = 0;
  try {
    walkTree(tree, (key, fields) => {
      if (found !== undefined) return false;
      if (key === 'FuncCall' && isSetConfigCall(fields)) setConfigCalls += 1;
      found = OPAQUE_CODE[key] ?? roleChangeOfNode(key, fields);
      return found === undefined;
    });
  } catch (error) {
    // A tree nested deeper than the stack: as unreadable as one the grammar refuses.
    if (error instanceof RangeError) return 'a statement nested too deeply to read';
    throw error;
  }
  if (found === undefined && setConfigCalls < names.setConfig) {
    return 'set_config named other than in a call';
  }
  return found;
}

/** What the statement's names show before its tree is read. */
function namesOf(context: StatementContext): {
  risky: boolean;
  escaped: boolean;
  runsSqlText: string | undefined;
  setConfig: number;
} {
  const names = {
    risky: false,
    escaped: false,
    runsSqlText: undefined as string | undefined,
    setConfig: 0,
  };
  for (let i = 0; i < context.length; i++) {
    // U&"..." names any word in escapes: refused rather than decoded here.
    if (context.kind(i) === 'quoted-ident' && context.letterAt(i) === 'u') names.escaped = true;
    const name = context.identifierName(i)?.toLowerCase();
    if (name === undefined) continue;
    if (RISKY_NAMES.has(name)) names.risky = true;
    if (name === 'set_config') names.setConfig += 1;
    if (SQL_TEXT_RUNNERS.has(name)) names.runsSqlText ??= name;
  }
  return names;
}

function isSetConfigCall(fields: Readonly<Record<string, unknown>>): boolean {
  const parts = listOf(fields, 'funcname');
  const last = stringOf(fieldsOf(parts[parts.length - 1], 'String'), 'sval');
  return last?.toLowerCase() === 'set_config';
}

function roleChangeOfNode(
  key: string,
  fields: Readonly<Record<string, unknown>>,
): string | undefined {
  // ALTER ROLE / DATABASE ... SET holds its SET as the field `setstmt`, not as a node.
  if (key === 'VariableSetStmt' || key === 'setstmt') {
    const kind = stringOf(fields, 'kind');
    if (kind === 'VAR_RESET_ALL') return 'RESET ALL';
    const name = stringOf(fields, 'name') ?? '';
    return isProtectedSetting(name) ? `SET or RESET of ${name}` : undefined;
  }
  if (key === 'DiscardStmt') {
    return stringOf(fields, 'target') === 'DISCARD_ALL' ? 'DISCARD ALL' : undefined;
  }
  if (key === 'FuncCall') return setConfigChange(fields);
  return undefined;
}

/** set_config(name, ...) naming a protected setting, or naming it other than by a plain literal. */
function setConfigChange(fields: Readonly<Record<string, unknown>>): string | undefined {
  if (!isSetConfigCall(fields)) return undefined;
  const first = unwrapNode(listOf(fields, 'args')[0]);
  const literal =
    first?.kind === 'A_Const' ? stringOf(fieldsOf(first.fields, 'sval'), 'sval') : undefined;
  if (literal === undefined) return 'set_config() of a setting not named by a string literal';
  return isProtectedSetting(literal) ? `set_config() of ${literal}` : undefined;
}
