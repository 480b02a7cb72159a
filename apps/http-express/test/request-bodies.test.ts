/**
 * Reading request bodies into core's typed requests (docs/interface.md, docs/decisions.md 3): the
 * refusals of bodies that are wrong for where they are sent, and the default target of the
 * server's configuration (10.48): a body that names none of host, port, user and database runs
 * there; one that names any of them is read as always; a password or an sslMode without a target
 * is refused rather than dropped.
 */
import { ErrorCodes, RequestError, type ConnectionTarget } from '@sqlgate/core';
import { BodyError, parsedText } from '../src/json-body';
import {
  readCancelBody,
  readConnectionCheckBody,
  readQueryBody,
  readSessionOpenBody,
  readSessionQueryBody,
  requestOrRefusal,
  type ConfiguredTargets,
} from '../src/contract';

const defaultTarget: ConnectionTarget = {
  host: '127.0.0.1',
  port: 54321,
  user: 'postgres',
  database: 'postgres',
  sslMode: 'disable',
};
const configured: ConfiguredTargets = { default: defaultTarget };
const connectionFields = {
  host: 'db.example',
  port: 5432,
  user: 'tester',
  password: 'secret',
  database: 'app',
};
/** SESSION_IDLE_TIMEOUT_MS of these tests. */
const MAX_IDLE_MS = 1000;

/** The answer's body and code of the RequestError `read` throws, as a use case answers it. */
function refusalOf(read: () => unknown): { body: Record<string, unknown>; code: string } {
  const refusal = requestOrRefusal(read);
  if (!(refusal instanceof RequestError)) throw new Error('the body was not refused');
  return { body: { error: refusal.message, ...refusal.body }, code: refusal.code };
}

describe('a refused body', () => {
  it('is handed on as its RequestError; anything else thrown is a defect, thrown on', () => {
    const refused = requestOrRefusal(() => readQueryBody([]));
    expect(refused).toBeInstanceOf(RequestError);
    expect(requestOrRefusal(() => readQueryBody({ ...connectionFields, sql: 'SELECT 1' }))).toEqual(
      expect.objectContaining({ sql: 'SELECT 1' }),
    );
    expect(() =>
      requestOrRefusal(() => {
        throw new TypeError('a defect');
      }),
    ).toThrow(TypeError);
  });

  it('lists the missing fields of a query', () => {
    expect(refusalOf(() => readQueryBody({ host: 'db', sql: 'SELECT 1' }))).toEqual({
      body: { error: 'Missing required fields', missing: ['port', 'user', 'database'] },
      code: ErrorCodes.MISSING_FIELDS,
    });
  });

  it('names a misspelt cache option instead of ignoring it', () => {
    const body = { ...connectionFields, sql: 'SELECT 1', cache: { ttl: 5000 } };
    expect(refusalOf(() => readQueryBody(body)).body).toEqual({
      error: "'cache' has an unknown field 'ttl': it accepts ttlMs and swrMs",
    });
  });

  it('of a cancel lists the missing fields of its login', () => {
    const { host, port } = connectionFields;
    expect(refusalOf(() => readCancelBody({ host, port })).code).toBe(ErrorCodes.MISSING_FIELDS);
  });
});

describe('the bodies of a session', () => {
  it('refuse the options that need a transaction or a cache of their own, and connection fields', () => {
    for (const field of ['readOnly', 'dryRun', 'isolationLevel', 'cache', 'host', 'password']) {
      const value = field === 'isolationLevel' ? 'serializable' : field === 'host' ? 'x' : true;
      const refused = refusalOf(() => readSessionQueryBody({ sql: 'SELECT 1', [field]: value }));
      expect(refused.code).toBe(ErrorCodes.INVALID_REQUEST);
      expect(refused.body).toEqual({
        error: expect.stringMatching(new RegExp(`cannot be used in a session: '${field}' \\(`)),
      });
    }
    // Every refused field is named at once.
    const several = refusalOf(() =>
      readSessionQueryBody({ sql: 'SELECT 1', user: 'x', dryRun: true }),
    );
    expect(several.body).toEqual({
      error: expect.stringMatching(
        /^These fields cannot be used in a session: 'user' .*; 'dryRun' /,
      ),
    });
    // Opening a session refuses the options of its requests rather than calling them unknown.
    const opening = refusalOf(() =>
      readSessionOpenBody({ ...connectionFields, readOnly: true, sql: 'x' }, MAX_IDLE_MS),
    );
    expect(opening.code).toBe(ErrorCodes.INVALID_REQUEST);
    expect(opening.body).toEqual({
      error: expect.stringMatching(
        /when a session opens: 'sql' .*; 'readOnly' \(write BEGIN READ ONLY/,
      ),
    });
    expect(readSessionQueryBody({ sql: 'SELECT 1', maxrows: 3 }).warnings).toEqual([
      expect.stringContaining("'maxRows'"),
    ]);
  });

  it('refuse an idleTimeoutMs above the server limit instead of shortening it', () => {
    const body = { ...connectionFields, idleTimeoutMs: 1001 };
    expect(refusalOf(() => readSessionOpenBody(body, MAX_IDLE_MS))).toEqual({
      body: {
        error:
          "'idleTimeoutMs' must be an integer from 1 to 1000 (SESSION_IDLE_TIMEOUT_MS), not 1001",
      },
      code: ErrorCodes.INVALID_REQUEST,
    });
    const within = readSessionOpenBody({ ...connectionFields, idleTimeoutMs: 1000 }, MAX_IDLE_MS);
    expect(within.idleTimeoutMs).toBe(1000);
  });
});

describe('a default target in the configuration', () => {
  it('is the target of a query whose body names none', () => {
    expect(readQueryBody({ sql: 'SELECT 1' }, configured).target).toEqual(defaultTarget);
  });

  it('leaves a body that names its own target to it, fields as sent', () => {
    const read = readQueryBody({ ...connectionFields, sql: 'SELECT 1' }, configured);
    expect(read.target).toEqual({ ...connectionFields, sslMode: 'prefer' });
  });

  it('names the missing fields of a body that names part of a target, as without one', () => {
    expect(
      refusalOf(() => readQueryBody({ host: 'db.example', sql: 'SELECT 1' }, configured)),
    ).toEqual({
      body: { error: 'Missing required fields', missing: ['port', 'user', 'database'] },
      code: ErrorCodes.MISSING_FIELDS,
    });
  });

  it('refuses a password or an sslMode sent without a target, instead of dropping them', () => {
    const withPassword = refusalOf(() =>
      readQueryBody({ password: 'secret', sql: 'SELECT 1' }, configured),
    );
    expect(withPassword.code).toBe('INVALID_REQUEST');
    expect(JSON.stringify(withPassword.body)).toContain(
      "'password' belongs to a target the request names",
    );
    const withBoth = refusalOf(() =>
      readQueryBody({ password: 'x', sslMode: 'require', sql: 'SELECT 1' }, configured),
    );
    expect(JSON.stringify(withBoth.body)).toContain("'password' and 'sslMode' belong to a target");
  });

  it('still requires the SQL text', () => {
    expect(refusalOf(() => readQueryBody({}, configured)).body).toEqual({
      error: 'Missing required fields',
      missing: ['sql'],
    });
  });

  it('is the target of a connection check, a cancel and a session whose body names none', () => {
    expect(readConnectionCheckBody({}, configured).target).toEqual(defaultTarget);
    expect(readCancelBody({}, configured).target).toEqual(defaultTarget);
    expect(readSessionOpenBody({}, MAX_IDLE_MS, configured).target).toEqual(defaultTarget);
  });
});

describe('without a default target', () => {
  it('a body without a target misses its fields, as it always did', () => {
    expect(refusalOf(() => readQueryBody({ sql: 'SELECT 1' })).body).toEqual({
      error: 'Missing required fields',
      missing: ['host', 'port', 'user', 'database'],
    });
    expect(refusalOf(() => readConnectionCheckBody({})).code).toBe(ErrorCodes.MISSING_FIELDS);
  });
});

describe('each field of a query', () => {
  const query = { host: 'db.example', port: 5432, user: 'app', database: 'app', sql: 'SELECT 1' };
  const NUL = 'contains a NUL character (U+0000), which PostgreSQL cannot receive';

  // The 400 messages of docs/interface.md, word for word: the schema finds what is wrong, these
  // words say it (docs/decisions.md 10.52).
  it.each([
    ['host', 5, "'host' must be a string"],
    [
      'host',
      '/tmp/.s.PGSQL.5432',
      "'host' must be a host name or an IP address, not a socket path",
    ],
    ['host', 'h'.repeat(256), "'host' is longer than 255 characters"],
    ['host', 'db\0', `'host' ${NUL}`],
    ['port', 0, "'port' must be an integer from 1 to 65535"],
    ['port', '65536', "'port' must be an integer from 1 to 65535"],
    ['port', true, "'port' must be an integer from 1 to 65535"],
    ['port', '54\u00002', `'port' ${NUL}`],
    ['user', 5, "'user' must be a string"],
    ['password', 5, "'password' must be a string"],
    ['database', false, "'database' must be a string"],
    ['sslMode', 'maybe', "'sslMode' must be one of: disable, require, prefer, verify-full"],
    ['sql', { text: 'SELECT 1' }, "'sql' must be a string"],
    [
      'sql',
      'SELECT \uD800',
      "'sql' contains a lone UTF-16 surrogate (U+D800) at character 8, which is not valid Unicode",
    ],
    ['params', 'x', "'params' must be an array"],
    ['params', Array(65536).fill(1), "'params' holds 65536 values; at most 65535 are allowed"],
    [
      'params',
      [2 ** 64],
      "'params[0]' is a number JSON cannot carry exactly (it arrived as 18446744073709552000); send it as a string",
    ],
    ['params', ['a', { 'k\0': 1 }], `'params[1]["k\\u0000"] (key)' ${NUL}`],
    ['timeoutMs', 0, "'timeoutMs' must be an integer from 1 to 2147483647"],
    ['maxRows', 1000001, "'maxRows' must be an integer from 1 to 1000000"],
    ['rowMode', 'table', "'rowMode' must be 'object' or 'array'"],
    ['readOnly', 'yes', "'readOnly' must be a boolean"],
    ['dryRun', 1, "'dryRun' must be a boolean"],
    ['dryRun', 'a\0', "'dryRun' must be a boolean"],
    [
      'cache',
      'yes',
      '\'cache\' must be true, false or {"ttlMs": <positive integer>, "swrMs": <positive integer>}',
    ],
    ['cache', { ttl: 5000 }, "'cache' has an unknown field 'ttl': it accepts ttlMs and swrMs"],
    [
      'cache',
      { ttlMs: 5, ttl: null },
      "'cache' has an unknown field 'ttl': it accepts ttlMs and swrMs",
    ],
    ['cache', { swrMs: 0 }, "'swrMs' must be an integer from 1 to 2147483647"],
    [
      'cache',
      { 'a\0': 1 },
      'A field name contains a NUL character (U+0000), which no field of a request may hold',
    ],
    [
      'isolationLevel',
      5,
      "'isolationLevel' must be one of: read committed, repeatable read, serializable",
    ],
    [
      'rowMode\0',
      1,
      'A field name contains a NUL character (U+0000), which no field of a request may hold',
    ],
  ])('%s: %j is refused with its words', (field, value, message) => {
    expect(refusalOf(() => readQueryBody({ ...query, [field]: value }))).toEqual({
      body: { error: message },
      code: ErrorCodes.INVALID_REQUEST,
    });
  });

  it('is read as docs/interface.md reads it beyond the schema', () => {
    const read = readQueryBody({
      ...query,
      port: '05432',
      password: null,
      sslMode: '',
      isolationLevel: 'SERIALIZABLE',
      cache: { ttlMs: 5, swrMs: null },
      params: null,
      rowMode: null,
    });
    const { host, user, database } = query;
    expect(read.target).toEqual({ host, port: 5432, user, database, sslMode: 'prefer' });
    expect(read.options).toEqual({
      rowMode: 'object',
      readOnly: false,
      dryRun: false,
      isolationLevel: 'serializable',
      cache: { ttlMs: 5 },
    });
    expect(readConnectionCheckBody({ ...query, database: '' }).target.database).toBe('postgres');
  });
});

describe('a number parsing changed (docs/decisions.md 10.8)', () => {
  /** What reading the body text `text` gives: 'read', or the message of its refusal. */
  const outcomeOf = (text: string): string => {
    const body = parsedText(text);
    if (body instanceof BodyError) return body.message;
    try {
      readQueryBody(body);
      return 'read';
    } catch (error) {
      return (error as Error).message;
    }
  };
  const target = '"host":"h","user":"u","database":"d","sql":"SELECT 1"';

  it('is let be in an unknown field, whose value is never read', () => {
    expect(outcomeOf(`{${target},"port":5432,"meta":1e400}`)).toBe('read');
    expect(outcomeOf(`{${target},"port":5432,"meta":{"id":12345678901234567890}}`)).toBe('read');
  });

  it("is refused in a field sqlgate reads, with that field's words", () => {
    const portRange = "'port' must be an integer from 1 to 65535";
    expect(outcomeOf(`{${target},"port":1e400}`)).toBe(portRange);
    // Parsed, it would be the port 5432: the caller's number changed silently.
    expect(outcomeOf(`{${target},"port":5432.000000000000000001}`)).toBe(portRange);
    expect(outcomeOf(`{${target},"port":5432,"timeoutMs":1e400}`)).toBe(
      "'timeoutMs' must be an integer from 1 to 2147483647",
    );
    expect(outcomeOf(`{${target},"port":5432,"params":[9007199254740993]}`)).toBe(
      "The number 9007199254740993 in 'params' cannot be carried exactly by JSON; send it as a string",
    );
  });
});
