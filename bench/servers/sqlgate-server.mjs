// sqlgate as the benchmarks run it: the built server on 127.0.0.1, a free port, no logging, the
// standalone server's V8 settings, every other setting from the environment (POOL_MAX 10 and
// MAX_ROWS 10000 by default). Prints {url}.
import { exitWhenTold, requireBuilt } from '../lib/harness.mjs';

const { applyServerV8Settings, startServer } = requireBuilt('apps/http-express');
applyServerV8Settings(); // as the standalone server does (docs/decisions.md 10.24)
const server = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
exitWhenTold(() => server.close());
process.stdout.write(`${JSON.stringify({ url: server.url, pid: process.pid })}\n`);
