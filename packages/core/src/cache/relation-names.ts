/**
 * Whether a write may have changed what a cached read saw. search_path is unknown, so names match
 * by their last part (`public.t`, `s.t`, `t`): removing too much costs a re-run, too little serves
 * wrong rows.
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
