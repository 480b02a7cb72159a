/**
 * How far a request's writes may reach, for invalidating the result cache (docs/decisions.md
 * 10.20): a write its whole database; session changes (10.15) may reach the whole server.
 */
import type { ParsedStatement } from '../parser/types';

export type WriteExtent = 'none' | 'database' | 'server';

const CURSOR_KEYWORDS = new Set(['DECLARE', 'FETCH', 'MOVE']);

const COMMIT_PREPARED = /^commit prepared\b/i;

const ORDER: Record<WriteExtent, number> = { none: 0, database: 1, server: 2 };

/** The further reaching of two extents. */
export function widerExtent(a: WriteExtent, b: WriteExtent): WriteExtent {
  return ORDER[a] >= ORDER[b] ? a : b;
}

/** The furthest any of `statements` may write; statements never sent count as sent. */
export function writeExtentOf(statements: readonly ParsedStatement[]): WriteExtent {
  let extent: WriteExtent = 'none';
  for (const statement of statements) {
    const reach = statementExtent(statement);
    if (ORDER[reach] > ORDER[extent]) extent = reach;
    if (extent === 'server') break;
  }
  return extent;
}

function statementExtent(statement: ParsedStatement): WriteExtent {
  switch (statement.statementClass) {
    case 'transaction-control':
      // BEGIN, COMMIT, SAVEPOINT change no data themselves: the writes they commit were counted
      // when they were sent. COMMIT PREPARED commits writes sent by whatever request prepared
      // them, perhaps another caller's, whose extent is unknown here.
      return COMMIT_PREPARED.test(statement.text) ? 'server' : 'none';
    case 'session':
      // SET, PREPARE, LISTEN, CREATE TEMP TABLE: only the session, which is cleaned afterwards. A
      // cursor runs its query, which may call a function that writes.
      return CURSOR_KEYWORDS.has(statement.keyword) ? 'server' : 'none';
    case 'read':
      // A read calling a user-defined function may write anywhere through it.
      return statement.changesSession ? 'server' : 'none';
    case 'write':
    case 'no-transaction':
      return statement.changesSession ? 'server' : 'database';
  }
}
