#!/usr/bin/env node
// The `sqlgate` command. This file is in the repository, not built: npm links a package's commands
// when it installs it and skips those whose file does not exist yet, and in a fresh clone dist/ is
// only built after `npm ci` has linked the workspaces, so `npx sqlgate` had nothing to run.
try {
  require.resolve('../dist/bin.js');
} catch {
  process.stderr.write('sqlgate: not built yet; run `npm run build` first\n');
  process.exit(1);
}
require('../dist/bin.js');
