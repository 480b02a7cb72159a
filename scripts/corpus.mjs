// Checks the statement splitter against PostgreSQL's regression SQL: the corpus directory named by
// SQL_CORPUS_DIR, by default `corpus` in the `shared` directory beside the repository
// (docs/decisions.md 1: the splitter must pass every file). Builds @sqlgate/core first when its
// dist is missing or older than its sources. Exits with the checker's status.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const corpusDir = process.env.SQL_CORPUS_DIR
  ? path.resolve(process.env.SQL_CORPUS_DIR)
  : path.resolve(repoRoot, '..', 'shared', 'corpus');
const checker = path.join(corpusDir, 'check-split.mjs');
const adapter = path.join(repoRoot, 'scripts', 'corpus-split.cjs');
const coreDir = path.join(repoRoot, 'packages', 'core');
const builtEntries = [
  path.join(coreDir, 'dist', 'index.js'),
  path.join(coreDir, 'dist', 'parser', 'index.js'),
];

function newestModification(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    const time = entry.isDirectory() ? newestModification(full) : fs.statSync(full).mtimeMs;
    if (time > newest) newest = time;
  }
  return newest;
}

function isBuildFresh() {
  const sourcesChanged = newestModification(path.join(coreDir, 'src'));
  return builtEntries.every(
    (file) => fs.existsSync(file) && fs.statSync(file).mtimeMs >= sourcesChanged,
  );
}

function ensureBuilt() {
  if (isBuildFresh()) return;
  console.log('Building @sqlgate/core ...');
  const build = spawnSync('npm', ['run', 'build', '-w', '@sqlgate/core', '--silent'], {
    cwd: repoRoot,
    stdio: 'inherit',
    shell: process.platform === 'win32',
  });
  if (build.status === 0) return;
  // tsc still emits on type errors elsewhere in core; the splitter only needs its own output.
  if (!fs.existsSync(builtEntries[1])) {
    console.error(
      'The @sqlgate/core build failed and produced no parser: cannot run the corpus check.',
    );
    process.exit(build.status ?? 1);
  }
  console.warn('Warning: the @sqlgate/core build reported errors; checking the parser it emitted.');
}

if (!fs.existsSync(checker)) {
  console.log(`Corpus check skipped: no corpus in ${corpusDir} (set SQL_CORPUS_DIR).`);
  process.exit(0);
}

ensureBuilt();
// The checker runs only when started under its real path (a symlinked corpus would make it a no-op).
const check = spawnSync(
  process.execPath,
  [fs.realpathSync(checker), '--module', adapter, ...process.argv.slice(2)],
  {
    stdio: 'inherit',
  },
);
process.exit(check.status ?? 1);
