// Adds to package-lock.json the platform-specific optional packages that npm left out of it.
//
// npm records every platform's optional binary (turbo's @turbo/darwin-64, jest's
// @unrs/resolver-binding-win32-x64-msvc...) only when the registry serves their manifests. The
// registry this project installs from serves this platform's packages only, so npm writes a lock
// file without the others, and `npm ci` then refuses it as out of sync ("Missing: ... from lock
// file"), here and on any other machine. This script adds the missing entries as npm would write
// them for a platform that is not the current one: optional, with the os / cpu / libc that the
// package name states, so `npm ci` accepts the lock and skips them on platforms they do not fit.
// Run it after changing dependencies: node scripts/complete-lockfile.mjs
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const lockPath = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
const packages = lock.packages;

const OS = {
  darwin: 'darwin',
  linux: 'linux',
  win32: 'win32',
  windows: 'win32',
  android: 'android',
  freebsd: 'freebsd',
  openharmony: 'openharmony',
  sunos: 'sunos',
  aix: 'aix',
  netbsd: 'netbsd',
  openbsd: 'openbsd',
};
const CPU = {
  x64: 'x64',
  64: 'x64',
  arm64: 'arm64',
  arm: 'arm',
  ia32: 'ia32',
  loong64: 'loong64',
  ppc64: 'ppc64',
  riscv64: 'riscv64',
  s390x: 's390x',
  mips64el: 'mips64el',
  wasm32: 'wasm32',
};

/** os, cpu and libc as a platform package's name states them (`linux-arm-gnueabihf`, `win32-x64-msvc`). */
function platformOf(name) {
  const words = name.split('/').pop().split('-');
  const platform = {};
  for (const word of words) {
    if (OS[word] && !platform.os) platform.os = [OS[word]];
    else if (CPU[word] && !platform.cpu) platform.cpu = [CPU[word]];
    else if (word === 'gnu' || word === 'gnueabihf') platform.libc = ['glibc'];
    else if (word === 'musl' || word === 'musleabihf') platform.libc = ['musl'];
    if ((word === 'eabi' || word === 'gnueabihf' || word === 'musleabihf') && !platform.cpu)
      platform.cpu = ['arm'];
  }
  return platform;
}

/** Where npm would look for `name` from the package at `from` (its own node_modules, then up). */
function resolves(from, name) {
  let dir = from;
  for (;;) {
    if (packages[path.posix.join(dir, 'node_modules', name)]) return true;
    if (dir === '') return false;
    const parent = dir.lastIndexOf('/node_modules/');
    dir = parent === -1 ? '' : dir.slice(0, parent);
  }
}

let added = 0;
for (const [location, entry] of Object.entries({ ...packages })) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    if (resolves(location, name)) continue;
    const platform = platformOf(name);
    if (!platform.os && !platform.cpu) continue; // not a platform binary: leave it to npm
    packages[`node_modules/${name}`] = {
      version,
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      ...platform,
    };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) =>
    a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0,
  ),
);
fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: ${added} platform packages added`);
