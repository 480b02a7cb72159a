/**
 * Saved queries: SQL kept under a name in a folder, in the browser's storage (storage.ts), and the
 * JSON file they are exported to and imported from. A query is known by its folder and name
 * together: saving, renaming or importing onto a folder and name already taken replaces that query
 * (saving, importing) or is refused (renaming), never makes a second one. Pure: no DOM.
 */
export interface SavedQuery {
  name: string;
  /** '' for no folder. */
  folder: string;
  sql: string;
  /** When it was saved or last replaced (ISO 8601). */
  savedAt: string;
}

/** What an exported file says it is, so that another JSON file is not taken for one. */
export const SAVED_QUERIES_FORMAT = 'sqlgate-saved-queries';
export const SAVED_QUERIES_VERSION = 1;

/** Bounds of one entry and of a file: an import larger than these is refused whole. */
export const MAX_NAME_LENGTH = 200;
export const MAX_IMPORTED_QUERIES = 10_000;
export const MAX_IMPORT_BYTES = 10 * 1024 * 1024;

export interface SavedQueriesFile {
  format: typeof SAVED_QUERIES_FORMAT;
  version: typeof SAVED_QUERIES_VERSION;
  exportedAt: string;
  queries: SavedQuery[];
}

/** A name or folder as it is kept: trimmed, with runs of white space as one space. */
export function tidyName(text: string): string {
  return text.trim().replace(/\s+/g, ' ');
}

/** Whether two queries have the same folder and name (which makes them one). */
export function sameQuery(
  a: Pick<SavedQuery, 'folder' | 'name'>,
  b: Pick<SavedQuery, 'folder' | 'name'>,
): boolean {
  return a.folder === b.folder && a.name === b.name;
}

/** Why a name or folder cannot be used, or undefined when it can. */
export function nameProblem(name: string, folder: string): string | undefined {
  if (tidyName(name) === '') return 'A saved query needs a name';
  if (tidyName(name).length > MAX_NAME_LENGTH || tidyName(folder).length > MAX_NAME_LENGTH) {
    return `Names and folders are at most ${MAX_NAME_LENGTH} characters`;
  }
  return undefined;
}

/** The list with `query` in it, replacing the query of the same folder and name, if any. */
export function withQuery(
  queries: SavedQuery[],
  query: SavedQuery,
): { queries: SavedQuery[]; replaced: boolean } {
  const replaced = queries.some((saved) => sameQuery(saved, query));
  return {
    queries: sorted([...queries.filter((saved) => !sameQuery(saved, query)), query]),
    replaced,
  };
}

export function withoutQuery(
  queries: SavedQuery[],
  query: Pick<SavedQuery, 'folder' | 'name'>,
): SavedQuery[] {
  return queries.filter((saved) => !sameQuery(saved, query));
}

/**
 * The list with `from` renamed (or moved) to `to`. Refused when `to` is the folder and name of
 * another query: a rename never replaces anything.
 */
export function renamedQuery(
  queries: SavedQuery[],
  from: Pick<SavedQuery, 'folder' | 'name'>,
  to: Pick<SavedQuery, 'folder' | 'name'>,
): { queries: SavedQuery[] } | { refused: string } {
  const target = { folder: tidyName(to.folder), name: tidyName(to.name) };
  const problem = nameProblem(target.name, target.folder);
  if (problem) return { refused: problem };
  if (!sameQuery(from, target) && queries.some((saved) => sameQuery(saved, target))) {
    return { refused: `${describe(target)} already exists: rename or delete it first` };
  }
  return {
    queries: sorted(
      queries.map((saved) => (sameQuery(saved, from) ? { ...saved, ...target } : saved)),
    ),
  };
}

/** The queries by folder: the folders in alphabetical order, no folder first. */
export function groupedByFolder(
  queries: SavedQuery[],
): { folder: string; queries: SavedQuery[] }[] {
  const groups = new Map<string, SavedQuery[]>();
  for (const query of sorted(queries)) {
    groups.set(query.folder, [...(groups.get(query.folder) ?? []), query]);
  }
  return [...groups].map(([folder, list]) => ({ folder, queries: list }));
}

/** How a query is named in messages: `folder / name`, or the name alone. */
export function describe(query: Pick<SavedQuery, 'folder' | 'name'>): string {
  return query.folder === '' ? `“${query.name}”` : `“${query.folder} / ${query.name}”`;
}

export function exportedFile(queries: SavedQuery[], now: Date): string {
  const file: SavedQueriesFile = {
    format: SAVED_QUERIES_FORMAT,
    version: SAVED_QUERIES_VERSION,
    exportedAt: now.toISOString(),
    queries: sorted(queries),
  };
  return `${JSON.stringify(file, null, 2)}\n`;
}

/**
 * The queries of an exported file, or the first reason it cannot be imported: the whole file is
 * checked before anything is kept, so a bad file imports nothing. Two entries with the same folder
 * and name make the file ambiguous, and it is refused.
 */
export function importedQueries(text: string): { queries: SavedQuery[] } | { error: string } {
  let file: unknown;
  try {
    file = JSON.parse(text);
  } catch {
    return { error: 'This file is not JSON: nothing was imported' };
  }
  const { format, version, queries } = (
    typeof file === 'object' && file !== null ? file : {}
  ) as Record<string, unknown>;
  if (format !== SAVED_QUERIES_FORMAT || !Array.isArray(queries)) {
    return { error: 'This is not a file of saved queries exported by the sqlgate console' };
  }
  if (version !== SAVED_QUERIES_VERSION) {
    return { error: `Saved queries of version ${String(version)} cannot be read by this console` };
  }
  if (queries.length > MAX_IMPORTED_QUERIES) {
    return {
      error: `The file holds more than ${MAX_IMPORTED_QUERIES} queries: nothing was imported`,
    };
  }
  const read: SavedQuery[] = [];
  for (const [position, entry] of queries.entries()) {
    const query = savedQueryOf(entry);
    const problem =
      query === undefined
        ? 'needs a name, a folder and sql, each a text'
        : nameProblem(query.name, query.folder);
    if (query === undefined || problem !== undefined) {
      return { error: `Entry ${position + 1}: ${problem ?? ''}, so nothing was imported` };
    }
    const earlier = read.findIndex((other) => sameQuery(other, query));
    if (earlier >= 0) {
      return {
        error: `Entries ${earlier + 1} and ${position + 1} are both ${describe(query)}: nothing was imported`,
      };
    }
    read.push(query);
  }
  return { queries: read };
}

/**
 * The saved queries with the imported ones added. An imported query replaces a saved query of the
 * same folder and name (the file wins, as restoring a backup expects); one identical to the saved
 * query (same SQL) counts as unchanged.
 */
export function mergedImport(
  saved: SavedQuery[],
  imported: SavedQuery[],
): { queries: SavedQuery[]; added: number; replaced: number; unchanged: number } {
  let queries = saved;
  let added = 0;
  let replaced = 0;
  let unchanged = 0;
  for (const query of imported) {
    const current = queries.find((candidate) => sameQuery(candidate, query));
    if (current?.sql === query.sql) {
      unchanged++;
      continue;
    }
    if (current) replaced++;
    else added++;
    queries = withQuery(queries, query).queries;
  }
  return { queries: sorted(queries), added, replaced, unchanged };
}

/** A stored or imported entry as a SavedQuery, tidied; undefined when it is not one. */
export function savedQueryOf(entry: unknown): SavedQuery | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const { name, folder, sql, savedAt } = entry as Record<string, unknown>;
  if (typeof name !== 'string' || typeof sql !== 'string') return undefined;
  if (folder !== undefined && typeof folder !== 'string') return undefined;
  return {
    name: tidyName(name),
    folder: tidyName(folder ?? ''),
    sql,
    savedAt: typeof savedAt === 'string' ? savedAt : new Date(0).toISOString(),
  };
}

function sorted(queries: SavedQuery[]): SavedQuery[] {
  return [...queries].sort(
    (a, b) => a.folder.localeCompare(b.folder) || a.name.localeCompare(b.name),
  );
}
