// sqlgate as the benchmarks run it: the built server on 127.0.0.1, a free port, no logging, every
// other setting from the environment (POOL_MAX 10 and MAX_ROWS 10000 by default). Prints {url}.
import { exitWhenTold, requireBuilt } from '../lib/harness.mjs';

const { startServer } = requireBuilt('apps/http-express');
const server = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
exitWhenTold(() => server.close());
process.stdout.write(`${JSON.stringify({ url: server.url, pid: process.pid })}\n`);
