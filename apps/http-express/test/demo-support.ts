/**
 * A PATH without PostgreSQL, for the tests of `sqlgate --demo`: the directories of PATH that hold
 * none of PostgreSQL's server programs, and no /usr/lib/postgresql/<version>/bin.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

const SERVER_PROGRAMS = ['initdb', 'pg_ctl', 'postgres'];

export function pathWithoutPostgres(searchPath = process.env.PATH ?? ''): string {
  return searchPath
    .split(path.delimiter)
    .filter((directory) => directory !== '' && !/\/postgresql\/[^/]+\/bin\/?$/.test(directory))
    .filter((directory) =>
      SERVER_PROGRAMS.every((program) => !existsSync(path.join(directory, program))),
    )
    .join(path.delimiter);
}
