/**
 * Which statement of a finished run the results open on. Pure.
 *
 * A script's last statements are often the point of it (set-up first, the SELECT last), so the
 * results open on the last statement that returned rows; a failed or cancelled statement comes
 * before that, since it says why the rest did not run.
 */
import type { RunResult } from './results';

/** The position in `run.statements` to show first; 0 for a run without statements. */
export function statementToShow(run: RunResult): number {
  const { statements } = run;
  const stopped = statements.findIndex(
    (statement) => statement.state === 'failed' || statement.state === 'cancelled',
  );
  if (stopped >= 0) return stopped;
  for (let position = statements.length - 1; position >= 0; position--) {
    if ((statements[position]?.fields.length ?? 0) > 0) return position;
  }
  return Math.max(0, statements.length - 1);
}
