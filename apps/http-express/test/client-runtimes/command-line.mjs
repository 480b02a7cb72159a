/**
 * Bun's and Deno's entry to checks.mjs: its one argument, JSON `{bundle, url, connectionString,
 * table}` (`bundle` the file URL of the client's dist/index.mjs); prints the report as JSON.
 */
import { runChecks } from './checks.mjs';

const [settings] = globalThis.Deno ? globalThis.Deno.args : process.argv.slice(2);
const { bundle, ...target } = JSON.parse(settings);
const client = await import(bundle);
console.log(JSON.stringify(await runChecks({ client, ...target })));
