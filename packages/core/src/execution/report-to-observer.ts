/**
 * What the service tells a request's observer once the request has run (docs/decisions.md 10.25):
 * how each statement ended, with what the result cache did, and a failure no statement carries.
 */
import type { CacheStatus } from '../cache/cache-status';
import { DatabaseError, ErrorCodes } from '../errors';
import type { ParsedStatement } from '../parser';
import { withLiteralsAsParameters } from '../parser/literals-as-parameters';
import { poolIdOf, type ConnectionTarget } from '../ports/connections';
import type {
  RequestFailureEvent,
  RequestObserver,
  StatementEvent,
} from '../ports/request-observer';
import type { PortFailure } from '../ports/settled';
import type { ExecutionFailure, ExecutionOutcome } from './outcome';
import type { StrategyName } from './plan';
import { bypassReasonOf, type RequestCacheUse } from './cache-use';

/** Literal-free texts of statements seen: the parse memo hands out the same objects again. */
const literalFreeTexts = new WeakMap<ParsedStatement, string>();

/**
 * A statement's end as the observer sees it. Its literal-free text is made only when read (by
 * the slow-query log, or spans with the text): most requests never need it.
 */
class StatementReport implements StatementEvent {
  outcome: StatementEvent['outcome'] = 'not_run';
  durationMs = 0;
  startMs?: number;
  endMs?: number;
  sqlState?: string;
  errorCode?: string;
  cache?: CacheStatus;
  readonly index: number;
  readonly command: string;
  readonly poolId: string;
  readonly host: string;
  readonly port: number;
  readonly database: string;

  constructor(
    private readonly statement: ParsedStatement,
    place: StatementPlace,
    readonly strategy: StrategyName | 'none',
  ) {
    this.index = statement.index;
    this.command = statement.keyword;
    this.poolId = place.poolId;
    this.host = place.host;
    this.port = place.port;
    this.database = place.database;
  }

  get normalisedText(): string {
    let text = literalFreeTexts.get(this.statement);
    if (text === undefined) {
      text = withLiteralsAsParameters(this.statement.text);
      literalFreeTexts.set(this.statement, text);
    }
    return text;
  }
}

/** Where a statement ran, as its event names it. */
type StatementPlace = Pick<StatementEvent, 'poolId' | 'host' | 'port' | 'database'>;

/** What the observer is told of a request's statements once it ended. */
export interface StatementsReport {
  observer: RequestObserver;
  target: ConnectionTarget;
  strategy: StrategyName | 'none';
  statements: readonly ParsedStatement[];
  outcome: ExecutionOutcome | undefined;
  cacheUse: RequestCacheUse | undefined;
}

/** Tells the observer how each statement of the request ended, in statement order. */
export function reportStatements(report: StatementsReport): void {
  const { observer, target, strategy, statements, outcome, cacheUse } = report;
  const { host, port, database } = target;
  const place: StatementPlace = { poolId: poolIdOf(target), host, port, database };
  const outcomes = outcome?.outcomes ?? [];
  // A statement that failed inside the service's transaction is the failure's, not an outcome.
  const failure = outcome?.failure;
  const failedInTransaction = failure?.kind === 'transaction' ? failure : undefined;
  statements.forEach((statement, position) => {
    const event = new StatementReport(statement, place, strategy);
    const each = outcomes[position];
    if (each) {
      event.outcome = !each.ok ? 'error' : each.cached ? 'cached' : 'ok';
      event.cache = each.cache ?? { status: 'bypass', reason: bypassReasonOf(statement, cacheUse) };
      event.durationMs = each.executionTime;
      if (each.startedAt !== undefined) {
        event.startMs = each.startedAt;
        event.endMs = each.startedAt + each.executionTime;
      }
      if (!each.ok) {
        event.errorCode = each.error.code;
        if (each.error instanceof DatabaseError) event.sqlState = each.error.sqlState;
      }
    }
    if (!each && failedInTransaction?.statement === statement) {
      event.outcome = 'error';
      event.durationMs = failedInTransaction.executionTime;
      event.errorCode = failedInTransaction.error.code;
      event.sqlState = failedInTransaction.error.sqlState;
      event.cache = { status: 'bypass', reason: bypassReasonOf(statement, cacheUse) };
    }
    observer.statementEnded?.(event);
  });
}

/** A failure no statement's event carries (RequestFailureEvent). */
export function reportRequestFailure(
  observer: RequestObserver,
  failure: ExecutionFailure,
  acquireFailures: ReadonlySet<PortFailure> | undefined,
): void {
  const failed =
    failure.kind === 'transaction' && failure.statement === undefined
      ? { step: 'commit' as const, error: failure.error }
      : failure.kind === 'request' && !acquireFailures?.has(failure.error)
        ? { step: 'request' as const, error: failure.error }
        : undefined;
  if (!failed || failed.error.code === ErrorCodes.REQUEST_ABORTED) return;
  const event: RequestFailureEvent = { step: failed.step, errorCode: failed.error.code };
  if (failed.error instanceof DatabaseError) event.sqlState = failed.error.sqlState;
  observer.requestFailed?.(event);
}
