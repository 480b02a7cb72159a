/**
 * Deciding whether a write may have changed what a cached read saw. The parser names relations as
 * the statement wrote them (`schema.table` or the bare `table`), but which schema a bare name
 * resolves to depends on the session's search_path, which the service does not know. So two names
 * are taken to be the same relation whenever their last part (the relation itself) is equal:
 * `public.t`, `s.t` and `t` all match one another. This errs towards removing too much: a removed
 * entry costs one re-execution, a kept stale one serves wrong rows.
 */

/**
 * The relation part of a possibly qualified name. A quoted name containing a dot is cut at its
 * last dot too; both sides are cut the same way, so equal relations still compare equal.
 */
export function relationPart(name: string): string {
  const lastDot = name.lastIndexOf('.');
  return lastDot === -1 ? name : name.slice(lastDot + 1);
}

/** Whether any name in `reads` may denote a relation in `written` (case-sensitive, as the parser gives them). */
export function readsAnyWritten(reads: readonly string[], written: readonly string[]): boolean {
  if (reads.length === 0 || written.length === 0) return false;
  const writtenParts = new Set(written.map(relationPart));
  return reads.some((name) => writtenParts.has(relationPart(name)));
}
