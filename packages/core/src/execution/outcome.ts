/** What running a request produced, before it is shaped into the response bodies of docs/interface.md. */
import type { CacheStatus } from '../cache/cache-status';
import type { DatabaseError } from '../errors';
import type { ParsedStatement } from '../parser/types';
import type { StatementResult } from '../ports/connections';
import type { PortFailure } from '../ports/settled';
import type { StrategyName } from './plan';

export type StatementOutcome =
  | {
      ok: true;
      statement: ParsedStatement;
      result: StatementResult;
      executionTime: number;
      /** When it was sent (the service's clock); absent for a result served from the cache. */
      startedAt?: number;
      cached?: boolean;
      /** What the result cache did, when the statement went through it (cache-attempt.ts). */
      cache?: CacheStatus;
    }
  | {
      ok: false;
      statement: ParsedStatement;
      /**
       * PostgreSQL refused the statement, the connection was lost while it ran, or its parameters
       * could not be sent.
       */
      error: PortFailure;
      executionTime: number;
      /** When it was sent (the service's clock). */
      startedAt?: number;
      cache?: CacheStatus;
    };

/** Why a request did not fully succeed. */
export type ExecutionFailure =
  /** A statement failed; the statements before it (if any) stand. */
  | { kind: 'statement'; index: number }
  /** A statement failed inside the service's transaction; everything was rolled back. */
  | {
      kind: 'transaction';
      index: number;
      error: DatabaseError;
      executionTime: number;
      /** The failing statement; absent when the transaction's end (COMMIT, or dryRun's ROLLBACK) failed. */
      statement?: ParsedStatement;
      /** The statement that ended the transaction, named when it is the one that failed. */
      end?: 'COMMIT' | 'ROLLBACK';
    }
  /** The script left a transaction open; it was rolled back. */
  | { kind: 'left-open' }
  /**
   * The caller went away, or cancelled the request (`cancelled`); the statements after `index` were
   * not sent (docs/decisions.md 10.7, 10.26).
   */
  | { kind: 'aborted'; index: number; cancelled?: true }
  /**
   * The request failed as a whole where no statement's outcome can say why (no connection, a failed
   * BEGIN or SET, a connection lost in the service's transaction or its COMMIT): the answer is this.
   */
  | { kind: 'request'; error: PortFailure };

export interface ExecutionOutcome {
  strategy: StrategyName;
  /** In statement order; a strategy that stops at a failure omits the statements it did not run. */
  outcomes: StatementOutcome[];
  /** The service wrapped the statements in a transaction of its own. */
  transactionUsed: boolean;
  /** Nothing the request did was kept (dryRun, or a transaction the script left open). */
  rolledBack: boolean;
  failure?: ExecutionFailure;
}
