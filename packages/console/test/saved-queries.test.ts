import {
  exportedFile,
  groupedByFolder,
  importedQueries,
  MAX_NAME_LENGTH,
  mergedImport,
  renamedQuery,
  SAVED_QUERIES_FORMAT,
  withoutQuery,
  withQuery,
  type SavedQuery,
} from '../src/browser/saved-queries';

function query(name: string, folder = '', sql = `SELECT '${name}'`): SavedQuery {
  return { name, folder, sql, savedAt: '2026-01-01T00:00:00.000Z' };
}

function fileOf(queries: unknown[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ format: SAVED_QUERIES_FORMAT, version: 1, queries, ...extra });
}

describe('saved queries', () => {
  it('replaces a query saved again under the same folder and name, and keeps the same name in another folder', () => {
    let { queries } = withQuery([], query('daily', 'reports'));
    queries = withQuery(queries, query('daily', '')).queries;
    const again = withQuery(queries, query('daily', 'reports', 'SELECT 2'));
    expect(again.replaced).toBe(true);
    expect(again.queries).toHaveLength(2);
    expect(again.queries.find((q) => q.folder === 'reports')?.sql).toBe('SELECT 2');
    expect(withoutQuery(again.queries, { folder: 'reports', name: 'daily' })).toEqual([
      query('daily', ''),
    ]);
  });

  it('groups by folder, no folder first, folders and names in alphabetical order', () => {
    const groups = groupedByFolder([
      query('b', 'zeta'),
      query('a', 'zeta'),
      query('x', ''),
      query('c', 'alpha'),
    ]);
    expect(groups.map((group) => [group.folder, group.queries.map((q) => q.name)])).toEqual([
      ['', ['x']],
      ['alpha', ['c']],
      ['zeta', ['a', 'b']],
    ]);
  });

  it('renames and moves a query, but never onto another one, and never to an empty name', () => {
    const queries = [query('a', 'f'), query('b', 'f')];
    const moved = renamedQuery(queries, query('a', 'f'), { name: '  a  2 ', folder: ' g ' });
    expect(moved).toEqual({ queries: [query('b', 'f'), query('a 2', 'g', "SELECT 'a'")] });
    expect(renamedQuery(queries, query('a', 'f'), { name: 'b', folder: 'f' })).toEqual({
      refused: '“f / b” already exists: rename or delete it first',
    });
    expect(renamedQuery(queries, query('a', 'f'), { name: ' ', folder: 'f' })).toEqual({
      refused: 'A saved query needs a name',
    });
    // Renaming to its own name changes nothing and is not a clash.
    expect(renamedQuery(queries, query('a', 'f'), { name: 'a', folder: 'f' })).toEqual({
      queries,
    });
  });
});

describe('the export file', () => {
  it('reads back exactly what was exported', () => {
    const queries = [query('ünïcode 🐘', 'f', 'SELECT 1;\r\nSELECT $$x$$'), query('plain')];
    const text = exportedFile(queries, new Date('2026-02-03T04:05:06Z'));
    expect(JSON.parse(text)).toMatchObject({
      format: SAVED_QUERIES_FORMAT,
      version: 1,
      exportedAt: '2026-02-03T04:05:06.000Z',
    });
    expect(importedQueries(text)).toEqual({ queries: [query('plain'), queries[0]] });
  });

  it.each([
    ['not JSON', '{"format":', 'This file is not JSON: nothing was imported'],
    [
      'another JSON file',
      JSON.stringify([query('a')]),
      'This is not a file of saved queries exported by the sqlgate console',
    ],
    [
      'a later version',
      fileOf([], { version: 2 }),
      'Saved queries of version 2 cannot be read by this console',
    ],
    [
      'an entry without sql',
      fileOf([query('a'), { name: 'b', folder: '' }]),
      'Entry 2: needs a name, a folder and sql, each a text, so nothing was imported',
    ],
    [
      'an entry with an empty name',
      fileOf([{ ...query('a'), name: '  ' }]),
      'Entry 1: A saved query needs a name, so nothing was imported',
    ],
    [
      'a name too long',
      fileOf([query('n'.repeat(MAX_NAME_LENGTH + 1))]),
      `Entry 1: Names and folders are at most ${MAX_NAME_LENGTH} characters, so nothing was imported`,
    ],
    [
      'two entries of one folder and name',
      fileOf([query('a', 'f'), query('b'), query(' a ', 'f', 'SELECT 3')]),
      'Entries 1 and 3 are both “f / a”: nothing was imported',
    ],
  ])('refuses %s whole', (_, text, error) => {
    expect(importedQueries(text)).toEqual({ error });
  });

  it('imports onto saved queries: new ones added, same folder and name replaced by the file, identical ones unchanged', () => {
    const saved = [query('kept'), query('same', 'f'), query('changed', 'f', 'SELECT old')];
    const imported = [query('same', 'f'), query('changed', 'f', 'SELECT new'), query('new', 'g')];
    const merged = mergedImport(saved, imported);
    expect(merged).toMatchObject({ added: 1, replaced: 1, unchanged: 1 });
    expect(merged.queries.map((q) => `${q.folder}/${q.name}=${q.sql}`)).toEqual([
      "/kept=SELECT 'kept'",
      'f/changed=SELECT new',
      "f/same=SELECT 'same'",
      "g/new=SELECT 'new'",
    ]);
    // Importing the same file again changes nothing.
    expect(mergedImport(merged.queries, imported)).toMatchObject({
      queries: merged.queries,
      added: 0,
      replaced: 0,
      unchanged: 3,
    });
  });
});
