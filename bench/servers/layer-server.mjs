// One layer of sqlgate's SELECT 1 for bench/layers.mjs, chosen by LAYER. A canned answer is the
// service's own answer to the request's first body, computed once and then given at once to every
// request, so no PostgreSQL round trip happens:
//
//   LAYER=bare-canned     node:http, a bare body reader and JSON.stringify, the canned answer
//   LAYER=adapter-canned  sqlgate's standalone server (startServer) around the canned answer
//   LAYER=core-bare       node:http, a bare body reader and JSON.stringify around the real
//                         service (createServiceFromConfig, as the standalone server configures it)
//
// Prints {url, pid} once listening, like the other servers here.
import http from 'node:http';
import { Buffer } from 'node:buffer';
import { exitWhenTold, requireBuilt } from '../lib/harness.mjs';

const { applyServerV8Settings, createServiceFromConfig, loadConfig, startServer } =
  requireBuilt('apps/http-express');

const layer = process.env.LAYER;
applyServerV8Settings(); // as the standalone server does, whichever layer runs
const service = createServiceFromConfig(loadConfig({}));

/** The service, answering every request with its answer to the first one (no round trip). */
function cannedService() {
  let canned;
  const answer = async (body) => (canned ??= await service.execute(body));
  return new Proxy(service, {
    get(target, key) {
      if (key === 'execute') return answer;
      if (key === 'stream')
        return async (body) => ({ streamed: false, response: await answer(body) });
      const value = target[key];
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A bare node:http server around `execute`: what a hand-written handler would do. */
async function bareServer(execute) {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      const response = await execute(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(response.body));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}

let running;
if (layer === 'bare-canned') running = await bareServer(cannedService().execute);
else if (layer === 'core-bare') running = await bareServer((body) => service.execute(body));
else if (layer === 'adapter-canned') {
  running = await startServer({
    port: 0,
    hostname: '127.0.0.1',
    logLevel: 'silent',
    service: cannedService(),
  });
} else throw new Error(`LAYER must be bare-canned, adapter-canned or core-bare, not ${layer}`);
exitWhenTold(() => running.close());
process.stdout.write(`${JSON.stringify({ url: running.url, pid: process.pid })}\n`);
