/** Whether and how a statement's rows may be exported as CSV. Pure. */
import type { RunResult, StatementResult } from './results';

/** What a run sent: the settings of its connection, its credentials' headers and the text it ran. */
export interface RunRequest {
  body: Record<string, unknown>;
  headers: Record<string, string>;
  sql: string;
}

/** How the CSV export may run a statement again, or why it may not. */
export type CsvExport = { sql: string } | { refused: string };

/**
 * CSV needs PostgreSQL's own text of every value, so the export runs the statement again through
 * the CSV stream, with the settings of the run that produced the tab (never the form as it is now).
 * Only where running it alone gives the same rows: a run of one statement (its text exactly as
 * sent), or reads that ran side by side, each on its own. A statement of a script may depend on what
 * ran before it (SET, a temporary table, a dry run's writes), and a statement that failed or was cut
 * has no rows to match.
 */
export function csvExportOf(
  run: RunResult,
  request: RunRequest,
  statement: StatementResult,
): CsvExport {
  if (statement.state !== 'done') {
    return { refused: 'This statement did not finish: there is nothing to export as CSV.' };
  }
  if (statement.cacheStatus === 'hit' || statement.cacheStatus === 'stale') {
    return {
      refused:
        'These rows came from the result cache; running the statement again could give others. ' +
        'Export JSON (the rows shown), or run it without the cache first.',
    };
  }
  if (run.statements.length === 1 && statement.index === 0 && request.body.dryRun !== true) {
    return { sql: request.sql };
  }
  if (run.outcome.transactionUsed === undefined && request.body.dryRun !== true) {
    return { sql: statement.text };
  }
  return {
    refused:
      'CSV export runs the statement again on its own, and this one belongs to a script whose earlier ' +
      'statements it may depend on. Export JSON (the rows shown), or run the statement alone first.',
  };
}
