/**
 * What cannot work behind a transaction pooler, refused before anything runs (docs/decisions.md
 * 10.33): a statement whose state outlives its transaction, and a session (sessions/). A pooler
 * such as PgBouncer in transaction mode hands each transaction of a client connection to whichever
 * server connection is free: such state stays on a server connection that other callers get, the
 * caller's next transaction does not find it, and sqlgate's cleaning (DISCARD ALL, 2.6) reaches
 * yet another one. Answered 200, a SET was lost and an advisory lock stayed held on an idle
 * backend; refused, the caller learns why and what works instead.
 */
import { ErrorCodes, RequestError } from '../errors';
import { stateOutlivingTransaction } from '../parser/session-state';
import type { ParsedStatement } from '../parser/types';
import type { Connection } from '../ports/connections';

/** The first statement of a request whose state outlives its transaction, and what that state is. */
export interface SessionStateNeed {
  statementIndex: number;
  /** As the caller wrote it: `SET`, `LISTEN`, `pg_advisory_lock()`... */
  what: string;
}

export function sessionStateNeedOf(
  statements: readonly ParsedStatement[],
): SessionStateNeed | undefined {
  for (const statement of statements) {
    const what = stateOutlivingTransaction(statement);
    if (what !== undefined) return { statementIndex: statement.index, what };
  }
  return undefined;
}

/** Why `connection` cannot run a request that needs `need`, when its target is a transaction pooler. */
export async function transactionPoolingRefusal(
  connection: Connection,
  need: SessionStateNeed,
): Promise<RequestError | undefined> {
  if (!connection.keepsSessionState || (await connection.keepsSessionState())) return undefined;
  return new RequestError(
    ErrorCodes.TRANSACTION_POOLING,
    `Statement ${need.statementIndex} (${need.what}) leaves state for later transactions of its ` +
      `connection, and ${POOLER}: the state would stay on a server connection other callers get, ` +
      'and later transactions would not find it. Nothing was run. What ends with the transaction ' +
      'works (SET LOCAL or set_config(..., true), pg_advisory_xact_lock(), ' +
      'CREATE TEMPORARY TABLE ... ON COMMIT DROP, inside BEGIN ... COMMIT), or connect to the ' +
      'server without the pooler',
    { code: ErrorCodes.TRANSACTION_POOLING, statementIndex: need.statementIndex },
  );
}

/** Why `connection` cannot hold a session (docs/decisions.md 10.26), when its target is a transaction pooler. */
export async function sessionRefusal(connection: Connection): Promise<RequestError | undefined> {
  if (!connection.keepsSessionState || (await connection.keepsSessionState())) return undefined;
  return new RequestError(
    ErrorCodes.TRANSACTION_POOLING,
    `A session keeps one server connection from one request to the next, and ${POOLER}: what ` +
      'it SETs, creates as temporary or locks outside a transaction would be lost between ' +
      'transactions. No session was opened; connect to the server without the pooler, or through ' +
      'one in session mode',
    { code: ErrorCodes.TRANSACTION_POOLING },
  );
}

const POOLER =
  'this target hands each transaction to whichever server connection is free (a transaction pooler, such as PgBouncer in transaction mode)';
