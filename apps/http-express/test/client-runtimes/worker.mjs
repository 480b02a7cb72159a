/**
 * workerd's entry to checks.mjs: a POST of JSON `{url, connectionString, table}` answers the report;
 * any other request answers that the worker is up. The client is the module workerd's config
 * names client.mjs, a copy of the built dist/index.mjs.
 */
/* global Response -- workerd's */
import * as client from './client.mjs';
import { runChecks } from './checks.mjs';

export default {
  async fetch(request) {
    if (request.method !== 'POST') return new Response('ready');
    return Response.json(await runChecks({ client, ...(await request.json()) }));
  },
};
