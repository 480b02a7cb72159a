/**
 * A program that runs out of work inside begin(): its transaction has inserted a row and then
 * waits on nothing, so the process (Node, Bun or Deno) is about to exit on its own with the
 * session open. Its one argument: JSON `{bundle, url, connectionString, table}`. Prints
 * `inserted` once the row is in; the client must then end the session, rolling the row back.
 */
const [settings] = globalThis.Deno ? globalThis.Deno.args : process.argv.slice(2);
const { bundle, url, connectionString, table } = JSON.parse(settings);
const { sqlgate } = await import(bundle);
const sql = sqlgate({ url, connectionString });

void sql.begin(async (tx) => {
  await tx.query(`INSERT INTO ${table} VALUES (1, 'left open')`);
  console.log('inserted');
  // Settles never, and holds nothing that keeps the process alive.
  await new Promise(() => {});
});
