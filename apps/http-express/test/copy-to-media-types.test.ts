/**
 * The Content-Type of a COPY ... TO STDOUT answer names the charset its bytes are in, or none
 * (docs/decisions.md 10.22): a client that decodes the answer as the header says reads the
 * characters PostgreSQL selected. A real listening server and PostgreSQL.
 */
import { startServer, type RunningServer } from '../src/server';
import { target } from './support';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
});
afterAll(() => server.close());

async function copyOut(sql: string): Promise<{ type: string; bytes: Buffer }> {
  const response = await fetch(`${server.url}/api/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(target({ sql })),
  });
  expect(response.status).toBe(200);
  return {
    type: response.headers.get('content-type') ?? '',
    bytes: Buffer.from(await response.arrayBuffer()),
  };
}

/** Decodes `bytes` as the Content-Type's charset says, as a browser or fetch's text() would. */
function decodedAsDeclared(type: string, bytes: Buffer): string {
  const charset = /;\s*charset=([^;]+)/.exec(type)?.[1];
  return new TextDecoder(charset).decode(bytes);
}

it.each([
  ['no ENCODING: UTF-8', 'é€', '', 'text/plain; charset=utf-8'],
  ['a string', 'é', "WITH (ENCODING 'LATIN1')", 'text/plain; charset=iso-8859-1'],
  ['a bare word', 'é', 'WITH (ENCODING latin1)', 'text/plain; charset=iso-8859-1'],
  ['an alias with spaces', 'é', "WITH (ENCODING 'ISO 8859 1')", 'text/plain; charset=iso-8859-1'],
  ['a dollar-quoted string', 'é', 'WITH (ENCODING $$LATIN1$$)', 'text/plain; charset=iso-8859-1'],
  ['a Windows code page', 'жук€', "ENCODING 'WIN1251'", 'text/plain; charset=windows-1251'],
  ['Cyrillic', 'жук', "WITH (FORMAT csv, ENCODING 'KOI8R')", 'text/csv; charset=koi8-r'],
  ['Japanese', 'あい', "WITH (ENCODING 'SJIS')", 'text/plain; charset=shift_jis'],
  ['Japanese, EUC', 'あい', "WITH (ENCODING 'EUC_JP')", 'text/plain; charset=euc-jp'],
])('names the charset of the data: %s', async (_what, text, options, expectedType) => {
  const { type, bytes } = await copyOut(`COPY (SELECT '${text}' AS v) TO STDOUT ${options}`);
  expect(type).toBe(expectedType);
  expect(decodedAsDeclared(type, bytes)).toBe(`${text}\n`);
});

it('claims no charset for an encoding that has none registered (SQL_ASCII)', async () => {
  const { type, bytes } = await copyOut(
    "COPY (SELECT 'plain' AS v) TO STDOUT WITH (FORMAT csv, ENCODING 'SQL_ASCII')",
  );
  expect(type).toBe('text/csv');
  expect(bytes.toString('latin1')).toBe('plain\n');
});

it('answers binary COPY data as application/octet-stream', async () => {
  const { type, bytes } = await copyOut(
    "COPY (SELECT 'é') TO STDOUT WITH (FORMAT binary, ENCODING 'LATIN1')",
  );
  expect(type).toBe('application/octet-stream');
  expect(bytes.subarray(0, 11)).toEqual(Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'));
});
