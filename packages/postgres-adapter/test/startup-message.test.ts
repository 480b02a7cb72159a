/** The StartupMessage sqlgate sends, rebuilt from pg's (docs/decisions.md 10.1). */
import { serialize } from 'pg-protocol';
import { sqlgateStartup } from '../src/startup-message';

function parameters(message: Buffer): Record<string, string> {
  expect(message.readInt32BE(0)).toBe(message.length);
  expect(message.readInt32BE(4)).toBe(196608);
  const fields = message.toString('utf8', 8, message.length - 1).split('\0');
  expect(message[message.length - 1]).toBe(0);
  const result: Record<string, string> = {};
  for (let index = 0; index + 1 < fields.length; index += 2) {
    result[fields[index] as string] = fields[index + 1] as string;
  }
  return result;
}

it('keeps user and database, sets application_name, and drops whatever else pg would send', () => {
  const fromPg = serialize.startup({
    user: 'alice',
    database: 'shop',
    application_name: 'from-the-environment',
    options: '-c search_path=evil',
    replication: 'database',
    statement_timeout: '1',
  });
  expect(parameters(sqlgateStartup(fromPg, 'sqlgate'))).toEqual({
    user: 'alice',
    database: 'shop',
    application_name: 'sqlgate',
  });
});

it('keeps characters beyond ASCII as UTF-8', () => {
  const fromPg = serialize.startup({ user: 'zoë', database: 'データ' });
  expect(parameters(sqlgateStartup(fromPg, 'sqlgate'))).toMatchObject({
    user: 'zoë',
    database: 'データ',
  });
});

it('passes on anything that is not a StartupMessage unchanged', () => {
  const other = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);
  expect(sqlgateStartup(other, 'sqlgate')).toBe(other);
});
