// Runs inside a scratch project that installed the packed @sqlgate tarballs: requires the packages
// by name, uses the library and the server the way the READMEs show, and prints one JSON line.
// The connection fields of a PostgreSQL server come as JSON in SQLGATE_PACK_TARGET.
'use strict';

const core = require('@sqlgate/core');
const adapter = require('@sqlgate/postgres-adapter');
const http = require('@sqlgate/http-express');

const EXPECTED_EXPORTS = {
  '@sqlgate/core': [
    core,
    ['createQueryService', 'MemoryCacheStore', 'splitSql', 'parseSql', 'loadParser'],
  ],
  '@sqlgate/postgres-adapter': [adapter, ['createPostgresConnections']],
  '@sqlgate/http-express': [
    http,
    ['startServer', 'createApp', 'createServiceFromConfig', 'loadConfig'],
  ],
};

async function main() {
  const target = JSON.parse(process.env.SQLGATE_PACK_TARGET || '');

  const resolved = {};
  const missingExports = [];
  for (const [name, [exports, names]] of Object.entries(EXPECTED_EXPORTS)) {
    resolved[name] = require.resolve(name);
    for (const exportName of names) {
      if (typeof exports[exportName] !== 'function') missingExports.push(`${name}: ${exportName}`);
    }
  }

  // The library, as @sqlgate/core's README shows it.
  const service = core.createQueryService({
    connections: adapter.createPostgresConnections(),
    cacheStore: new core.MemoryCacheStore(),
  });
  let library;
  try {
    // A typed request: the use cases read no HTTP body.
    const { body, failure, timings } = await service.execute({
      target: { ...target, sslMode: 'prefer' },
      sql: 'SELECT 2 AS two',
      options: { rowMode: 'object', readOnly: false, dryRun: false },
    });
    library = { body, failure: failure ?? null, timingKeys: Object.keys(timings).sort() };
  } finally {
    await service.close();
  }
  const split = core.splitSql("SELECT 'a;  b'; -- note\nSELECT  2;");
  await core.loadParser();
  const classes = core
    .parseSql('SELECT 1; INSERT INTO t VALUES (1)')
    .map((statement) => statement.statementClass);

  // The server, as @sqlgate/http-express's README shows it.
  const server = await http.startServer({ port: 0, hostname: '127.0.0.1' });
  let query;
  let consolePage;
  try {
    const response = await globalThis.fetch(`${server.url}/api/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...target, sql: 'SELECT 1 AS one' }),
    });
    query = { status: response.status, body: await response.json() };
    // The console, from the installed @sqlgate/console's built assets.
    const page = await globalThis.fetch(`${server.url}/`);
    const pageText = await page.text();
    const script = /<script type="module" src="([^"]+)"/.exec(pageText);
    const scriptResponse = script
      ? await globalThis.fetch(`${server.url}/${script[1]}`)
      : undefined;
    consolePage = {
      status: page.status,
      type: page.headers.get('content-type'),
      script: scriptResponse ? scriptResponse.status : 'not named',
      scriptBytes: scriptResponse ? (await scriptResponse.text()).length : 0,
    };
  } finally {
    await server.close();
  }

  process.stdout.write(
    `${JSON.stringify({ resolved, missingExports, library, split, classes, query, consolePage })}\n`,
  );
}

main().catch((error) => {
  process.stderr.write(`${error && error.stack ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
