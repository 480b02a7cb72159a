/**
 * What cannot work behind a transaction pooler, refused before anything runs (docs/decisions.md
 * 10.33): a statement whose state outlives its transaction, and a session.
 */
import { ConnectionError, ErrorCodes, RequestError } from '../errors';
import { stateOutlivingTransaction } from '../parser/session-state';
import type { ParsedStatement } from '../parser/types';
import type { Connection, SessionStateVerdict } from '../ports/connections';
import type { PortFailure } from '../ports/settled';

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

/** What is known of `connection`'s target: kept when the connection cannot tell. */
function sessionStateVerdictOf(connection: Connection): Promise<SessionStateVerdict> {
  return connection.sessionStateVerdict?.() ?? Promise.resolve(KEPT);
}

const KEPT: SessionStateVerdict = { kind: 'kept' };

/**
 * Why `connection` cannot run a request that needs `need`: its target is, or may be, a transaction
 * pooler, or whether it is one could not be found out.
 */
export async function transactionPoolingRefusal(
  connection: Connection,
  need: SessionStateNeed,
): Promise<PortFailure | undefined> {
  const what = `Statement ${need.statementIndex} (${need.what}) leaves state for later transactions of its connection`;
  const verdict = await sessionStateVerdictOf(connection);
  if (verdict.kind === 'kept') return undefined;
  if (verdict.kind === 'unknown') return notFoundOut(what, verdict.failure);
  return new RequestError(
    ErrorCodes.TRANSACTION_POOLING,
    `${what}, and ${POOLER[verdict.kind]}: the state would stay on a server connection other ` +
      'callers get, and later transactions would not find it. Nothing was run. What ends with the ' +
      'transaction works (SET LOCAL or set_config(..., true), pg_advisory_xact_lock(), ' +
      'CREATE TEMPORARY TABLE ... ON COMMIT DROP, inside BEGIN ... COMMIT), or connect to the ' +
      'server without the pooler',
    { code: ErrorCodes.TRANSACTION_POOLING, statementIndex: need.statementIndex },
  );
}

/**
 * Why `connection` cannot hold a session (docs/decisions.md 10.26): its target is, or may be, a
 * transaction pooler, or whether it is one could not be found out.
 */
export async function sessionRefusal(connection: Connection): Promise<PortFailure | undefined> {
  const what = 'A session keeps one server connection from one request to the next';
  const verdict = await sessionStateVerdictOf(connection);
  if (verdict.kind === 'kept') return undefined;
  if (verdict.kind === 'unknown') return notFoundOut(what, verdict.failure);
  return new RequestError(
    ErrorCodes.TRANSACTION_POOLING,
    `${what}, and ${POOLER[verdict.kind]}: what it SETs, creates as temporary or locks outside a ` +
      'transaction would be lost between transactions. No session was opened; connect to the ' +
      'server without the pooler, or through one in session mode',
    { code: ErrorCodes.TRANSACTION_POOLING },
  );
}

const POOLER = {
  'transaction-pooler':
    'this target hands each transaction to whichever server connection is free (a transaction pooler, such as PgBouncer in transaction mode)',
  // docs/decisions.md 10.32: a pooler not shown to keep one server connection per client
  // connection is refused as a transaction pooler, and probed again later.
  'pooler-unproven':
    'this target is a pooler not shown to keep one server connection for each client connection, ' +
    'so it is taken for a transaction pooler, which hands each transaction to whichever server ' +
    'connection is free (sqlgate looks again within a minute)',
} as const;

/**
 * The target's probe could not finish (docs/decisions.md 10.32): refused rather than run, with
 * the probe's own failure, which a retry may not meet.
 */
function notFoundOut(what: string, failure: ConnectionError): ConnectionError {
  return new ConnectionError(
    failure.code,
    `${what}, and whether this target keeps it could not be found out (a transaction pooler, ` +
      'which hands each transaction to whichever server connection is free, does not): ' +
      `sqlgate's probe of the target failed: ${failure.message}. Nothing was run; try again`,
    failure.systemCode,
    { cause: failure },
  );
}
