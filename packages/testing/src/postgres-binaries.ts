import { constants } from 'node:fs';
import { access, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { runCommand } from './run-command';

/** Paths of the PostgreSQL server programs a throwaway cluster needs. */
export interface PostgresBinaries {
  directory: string;
  initdb: string;
  pgCtl: string;
}

const DEBIAN_INSTALL_ROOT = '/usr/lib/postgresql';

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The directory holding initdb, pg_ctl and postgres, if `directory` has all three. Symlinks are
 * resolved because /usr/local/bin style links point at a version directory where `postgres` lives.
 */
async function binariesIn(directory: string): Promise<PostgresBinaries | undefined> {
  let initdb: string;
  try {
    initdb = await realpath(path.join(directory, 'initdb'));
  } catch {
    return undefined;
  }
  const real = path.dirname(initdb);
  const pgCtl = path.join(real, 'pg_ctl');
  const postgres = path.join(real, 'postgres');
  if (
    !(await isExecutable(initdb)) ||
    !(await isExecutable(pgCtl)) ||
    !(await isExecutable(postgres))
  ) {
    return undefined;
  }
  return { directory: real, initdb, pgCtl };
}

async function fromPath(): Promise<PostgresBinaries | undefined> {
  for (const directory of (process.env.PATH ?? '').split(path.delimiter)) {
    if (directory === '') continue;
    const found = await binariesIn(directory);
    if (found) return found;
  }
  return undefined;
}

async function fromPgConfig(): Promise<PostgresBinaries | undefined> {
  try {
    const { stdout } = await runCommand('pg_config', ['--bindir'], { timeoutMs: 10_000 });
    return await binariesIn(stdout.trim());
  } catch {
    return undefined;
  }
}

/** Debian/Ubuntu keep each major version apart; the highest one wins. */
async function fromDebianLayout(): Promise<PostgresBinaries | undefined> {
  let versions: string[];
  try {
    versions = await readdir(DEBIAN_INSTALL_ROOT);
  } catch {
    return undefined;
  }
  const numeric = versions.filter((name) => /^\d+(\.\d+)?$/.test(name));
  numeric.sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
  for (const version of numeric) {
    const found = await binariesIn(path.join(DEBIAN_INSTALL_ROOT, version, 'bin'));
    if (found) return found;
  }
  return undefined;
}

let cached: Promise<PostgresBinaries> | undefined;

/**
 * Finds the PostgreSQL server programs: on PATH, then through `pg_config --bindir`, then under
 * /usr/lib/postgresql/<version>/bin (highest version). Looked up once per process.
 */
export function findPostgresBinaries(): Promise<PostgresBinaries> {
  cached ??= (async () => {
    const found = (await fromPath()) ?? (await fromPgConfig()) ?? (await fromDebianLayout());
    if (!found) {
      throw new Error(
        `no PostgreSQL server programs (initdb, pg_ctl, postgres) on PATH, via pg_config --bindir, or under ${DEBIAN_INSTALL_ROOT}/<version>/bin`,
      );
    }
    return found;
  })();
  // A failed lookup is retried next time: the programs may have been installed meanwhile.
  cached.catch(() => {
    cached = undefined;
  });
  return cached;
}

/** Checks that a caller-supplied directory holds the server programs. */
export async function postgresBinariesIn(directory: string): Promise<PostgresBinaries> {
  const found = await binariesIn(directory);
  if (!found) throw new Error(`${directory} does not hold initdb, pg_ctl and postgres`);
  return found;
}
