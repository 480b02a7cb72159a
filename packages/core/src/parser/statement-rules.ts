/**
 * Classes of the statements whose first keyword alone does not decide (docs/decisions.md 1);
 * "no-transaction" follows PostgreSQL's PreventInTransactionBlock() calls.
 */
import type { StatementContext } from './statement-context';
import type { StatementClass } from './types';

/** Objects whose CREATE / DROP cannot run inside a transaction block. */
const OUTSIDE_TRANSACTION_OBJECTS = new Set(['database', 'tablespace', 'subscription']);

/** Index of the first token after `IF [NOT] EXISTS` at `i`, or `i`. */
function skipIfExists(context: StatementContext, i: number): number {
  if (context.word(i) !== 'if') return i;
  return context.word(i + 1) === 'not' ? i + 3 : i + 2;
}

/** The relation name at `i` is in the pg_temp schema, so the object is temporary. */
function namesTemporarySchema(context: StatementContext, i: number): boolean {
  return context.word(i) === 'pg_temp' && context.isChar(i + 1, '.');
}

/** CREATE: database, tablespace, subscription, index concurrently, or a temporary object. */
export function classOfCreate(context: StatementContext, from: number): StatementClass {
  let i = from + 1;
  if (context.word(i) === 'or' && context.word(i + 1) === 'replace') i += 2;
  const scope = context.word(i);
  if (scope === 'global' || scope === 'local') i++;
  const persistence = context.word(i);
  const temporary = persistence === 'temp' || persistence === 'temporary';
  if (temporary || persistence === 'unlogged') i++;
  if (context.word(i) === 'recursive') i++;
  let object = context.word(i);
  if (object !== undefined && OUTSIDE_TRANSACTION_OBJECTS.has(object)) return 'no-transaction';
  if (object === 'unique') object = context.word(++i);
  if (object === 'index' && context.word(i + 1) === 'concurrently') return 'no-transaction';
  if (temporary) return 'session';
  if (object === 'materialized' || object === 'foreign') i++;
  if (namesTemporarySchema(context, skipIfExists(context, i + 1))) return 'session';
  return 'write';
}

/** DROP: database, tablespace, subscription (when it has a replication slot, the usual case), index concurrently. */
export function classOfDrop(context: StatementContext, from: number): StatementClass {
  const object = context.word(from + 1);
  if (object !== undefined && OUTSIDE_TRANSACTION_OBJECTS.has(object)) return 'no-transaction';
  if (object === 'index' && context.word(from + 2) === 'concurrently') return 'no-transaction';
  return 'write';
}

/**
 * ALTER SYSTEM; ALTER DATABASE ... SET TABLESPACE; ALTER SUBSCRIPTION ... REFRESH / SET|ADD|DROP
 * PUBLICATION (they refresh by default); ALTER TABLE ... DETACH PARTITION ... CONCURRENTLY.
 */
export function classOfAlter(context: StatementContext, from: number): StatementClass {
  const object = context.word(from + 1);
  if (object === 'system') return 'no-transaction';
  if (object === 'database') {
    for (let i = from + 2; i < context.length; i++) {
      if (context.word(i) === 'set' && context.word(i + 1) === 'tablespace')
        return 'no-transaction';
    }
  }
  if (object === 'subscription' && context.hasWord(from + 2, 'refresh', 'publication')) {
    return 'no-transaction';
  }
  if (object === 'table' && context.hasWord(from + 2, 'concurrently')) return 'no-transaction';
  return 'write';
}

/** REINDEX ... CONCURRENTLY, and REINDEX SCHEMA / DATABASE / SYSTEM, which commit as they go. */
export function classOfReindex(context: StatementContext, from: number): StatementClass {
  if (context.hasWord(from + 1, 'concurrently')) return 'no-transaction';
  const object = context.word(context.skipParentheses(from + 1));
  if (object === 'schema' || object === 'database' || object === 'system') return 'no-transaction';
  return 'write';
}

/** CLUSTER without a table name reclusters every table, one transaction each. */
export function classOfCluster(context: StatementContext, from: number): StatementClass {
  let i = context.skipParentheses(from + 1);
  if (context.word(i) === 'verbose') i++;
  return i >= context.length ? 'no-transaction' : 'write';
}

/** A COPY FROM STDIN runs only through POST /api/copy, which carries its data (docs/decisions.md 10.23). */
export const COPY_FROM_STDIN_REASON =
  'COPY ... FROM STDIN is not supported in POST /api/query: send its data with POST /api/copy';
/** A COPY TO STDOUT runs only as a streamed answer of its own (docs/decisions.md 10.22). */
export const COPY_TO_STDOUT_REASON =
  'COPY ... TO STDOUT must be the only statement of its request: its data is the whole answer';

/**
 * Why COPY cannot run over HTTP, or null: FROM STDIN and TO STDOUT stream rows, which a JSON
 * request/response cannot carry. COPY with a file or program is an ordinary write.
 */
export function copyUnsupportedReason(context: StatementContext, from: number): string | null {
  let i = from + 1;
  while (i < context.length) {
    if (context.isChar(i, '(')) {
      i = context.skipParentheses(i);
      continue;
    }
    const word = context.word(i++);
    if (word !== 'from' && word !== 'to') continue;
    const target = context.word(i);
    if (target !== 'stdin' && target !== 'stdout') return null;
    return word === 'from' ? COPY_FROM_STDIN_REASON : COPY_TO_STDOUT_REASON;
  }
  return null;
}
