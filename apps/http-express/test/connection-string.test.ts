/**
 * The Neon-Connection-String header read as libpq reads a connection URI (docs/interface.md, "The
 * Neon-Connection-String header"): valid strings and their targets, refusals and their sentences,
 * a seeded fuzz that only ever sees a target or a RequestError, and a round trip of random targets.
 */
import { ErrorCodes, RequestError, SSL_MODES, type ConnectionTarget } from '@sqlgate/core';
import { createRandom, type Random } from '@sqlgate/testing';
import { parse as pgParse } from 'pg-connection-string';
import { connectionTargetOf } from '../src/contract/connection-string';

const NEON =
  'postgresql://alex:AbC%40123@ep-cool-darkness-123456.us-east-2.aws.neon.tech/dbname?sslmode=require&channel_binding=require';

interface ValidCase {
  uri: string;
  target: ConnectionTarget;
  /** Why pg-connection-string reads this one otherwise, when it does. */
  pgDiffers?: string;
}

const target = (fields: Partial<ConnectionTarget>): ConnectionTarget => ({
  host: 'db.example',
  port: 5432,
  user: 'u',
  database: 'db',
  sslMode: 'prefer',
  ...fields,
});

const VALID: ValidCase[] = [
  {
    uri: NEON,
    target: {
      host: 'ep-cool-darkness-123456.us-east-2.aws.neon.tech',
      port: 5432,
      user: 'alex',
      password: 'AbC@123',
      database: 'dbname',
      sslMode: 'require',
    },
  },
  {
    uri: 'postgres://u:p%40%3A%2F%25x@db.example:6543/app',
    target: target({ password: 'p@:/%x', port: 6543, database: 'app' }),
  },
  { uri: 'postgresql://u@[::1]:5433/db', target: target({ host: '::1', port: 5433 }) },
  { uri: 'postgresql://u@[2001:db8::7]/db', target: target({ host: '2001:db8::7' }) },
  { uri: 'postgresql://u@127.0.0.1:5432/db', target: target({ host: '127.0.0.1' }) },
  { uri: 'postgresql://u:pw@db.example/db', target: target({ password: 'pw' }) },
  { uri: 'postgresql://u:@db.example/db', target: target({ password: '' }) },
  { uri: 'postgresql://alice@db.example', target: target({ user: 'alice', database: 'alice' }) },
  { uri: 'postgresql://alice@db.example/', target: target({ user: 'alice', database: 'alice' }) },
  {
    uri: 'postgresql://alice@db.example?sslmode=disable',
    target: target({ user: 'alice', database: 'alice', sslMode: 'disable' }),
  },
  ...SSL_MODES.map((sslMode) => ({
    uri: `postgresql://u@db.example/db?sslmode=${sslMode}`,
    target: target({ sslMode }),
  })),
  {
    uri: 'postgresql://u@db.example/db?ssl=true',
    target: target({ sslMode: 'require' }),
    pgDiffers: 'it reads ssl=true as ssl, not as sslmode=require',
  },
  {
    uri: 'postgresql://u:p@h1.example/db1?host=h2.example&port=7000&user=v&password=q%26r&dbname=db2',
    target: target({ host: 'h2.example', port: 7000, user: 'v', password: 'q&r', database: 'db2' }),
    pgDiffers: 'it reads dbname as an unknown parameter, not as the database',
  },
  {
    uri: 'postgresql://u@db.example/db?password=s%3Dx&sslmode=verify-full&channel_binding=require',
    target: target({ password: 's=x', sslMode: 'verify-full' }),
  },
  {
    uri: 'postgresql://u@db.example/db?channel_binding=disable',
    target: target({}),
  },
  {
    // What the Neon driver sends: application_name added to the caller's URI, accepted, not used.
    uri: 'postgresql://u@db.example/db?sslmode=require&application_name=pkg%3Anpm%2F%2540neondatabase%2Fserverless%401.2.0',
    target: target({ sslMode: 'require' }),
  },
  {
    uri: 'postgresql://u@db.example/db?channel_binding=prefer&',
    target: target({}),
  },
  { uri: 'postgresql://u@db%2Eexample/db', target: target({}) },
  {
    uri: 'postgresql://%C3%A9mile@db.example/d%C3%A9',
    target: target({ user: 'émile', database: 'dé' }),
  },
  {
    uri: 'postgresql://u@db.example/a%2Fb%3Fc',
    target: target({ database: 'a/b?c' }),
    pgDiffers: 'it decodes the database with decodeURI, which leaves %2F and %3F encoded',
  },
  { uri: 'postgresql://u@db.example:05432/db', target: target({}) },
  { uri: 'postgresql://u@db.example:/db', target: target({}) },
  {
    uri: 'postgresql://u@DB.Example/db',
    target: target({ host: 'DB.Example' }),
  },
];

describe('connectionTargetOf: valid connection strings', () => {
  it.each(VALID)('$uri', ({ uri, target: expected }) => {
    expect(connectionTargetOf(uri)).toEqual(expected);
  });

  // pg-connection-string ships with pg; where its reading is libpq's, it finds the same parts.
  it.each(VALID.filter((valid) => valid.pgDiffers === undefined))(
    'pg-connection-string agrees: $uri',
    ({ uri, target: expected }) => {
      const pg = pgParse(uri, { useLibpqCompat: true }) as Record<string, unknown>;
      // URL parsing lower-cases a host name; PostgreSQL host names are not case-sensitive.
      expect(String(pg.host).toLowerCase()).toBe(expected.host.toLowerCase());
      expect(Number(pg.port || 5432)).toBe(expected.port);
      expect(pg.user).toBe(expected.user);
      // pg-connection-string reads an absent password as an empty one.
      expect(pg.password || undefined).toBe(expected.password || undefined);
      expect(pg.database ?? expected.user).toBe(expected.database);
      expect(pg.sslmode ?? 'prefer').toBe(expected.sslMode);
    },
  );
});

const SECRET = 'hunter2';

/** Each with a sentence the refusal holds; none may show the password. */
const INVALID: [uri: string, message: string | RegExp][] = [
  ['host=db.example user=u', 'key=value connection strings are not accepted'],
  ['mysql://u@db.example/db', 'must be a connection URI starting with postgresql://'],
  ['', 'must be a connection URI starting with postgresql://'],
  [`postgresql://db.example/db`, 'names no user'],
  [`postgresql://:${SECRET}@db.example/db`, 'names no user'],
  [`postgresql://u:${SECRET}@/db`, 'names no host'],
  [`postgresql://u:${SECRET}@db.example/db?host=`, 'names no host'],
  [`postgresql://u:${SECRET}@h1.example,h2.example/db`, 'names several hosts'],
  [`postgresql://u:${SECRET}@db.example/db?host=h1,h2`, 'names several hosts'],
  [`postgresql://u:${SECRET}@db.example/db?port=5432,5433`, 'names several ports'],
  [
    `postgresql://u:${SECRET}@%2Ftmp/db`,
    "'host' must be a host name or an IP address, not a socket path",
  ],
  [`postgresql://u:${SECRET}@db.example/db?host=%2Fvar%2Frun%2Fpostgresql`, 'not a socket path'],
  [`postgresql://u:${SECRET}@${'h'.repeat(256)}/db`, "'host' is longer than 255 characters"],
  [`postgresql://u:${SECRET}@db.example:0/db`, "'port' must be an integer from 1 to 65535"],
  [`postgresql://u:${SECRET}@db.example:65536/db`, "'port' must be an integer from 1 to 65535"],
  [`postgresql://u:${SECRET}@db.example:abc/db`, "'port' must be an integer from 1 to 65535"],
  [`postgresql://u:${SECRET}%ZZ@db.example/db`, 'invalid percent-encoding in the password'],
  [`postgresql://u:${SECRET}%C3@db.example/db`, 'invalid percent-encoding in the password'],
  [`postgresql://u:${SECRET}@db.example/%FF`, 'invalid percent-encoding in the database name'],
  [`postgresql://u:${SECRET}%00@db.example/db`, "'password' contains a NUL character"],
  [`postgresql://u%00:${SECRET}@db.example/db`, "'user' contains a NUL character"],
  [`postgresql://u:${SECRET}@db.example/d%00b`, "'database' contains a NUL character"],
  [
    `postgresql://u:${SECRET}@db.example/db?pass%00word=x`,
    'a query parameter name that contains a NUL character',
  ],
  [`postgresql://u:${SECRET}\ud800@db.example/db`, "'password' contains a lone UTF-16 surrogate"],
  [`postgresql://u:${SECRET}@db.example/db?password=a%00`, "'password' contains a NUL character"],
  [
    `postgresql://u:${SECRET}@db.example/db?sslmode=allow`,
    /sslmode=allow: sqlgate supports sslmode disable, require, prefer, verify-full/,
  ],
  [
    `postgresql://u:${SECRET}@db.example/db?sslmode=verify-ca`,
    'sslmode=verify-ca: sqlgate supports',
  ],
  [`postgresql://u:${SECRET}@db.example/db?sslmode=bogus`, 'an sslmode that is not one of'],
  [`postgresql://u:${SECRET}@db.example/db?sslmode=`, 'an sslmode that is not one of'],
  [`postgresql://u:${SECRET}@db.example/db?ssl=false`, "'ssl' with a value other than true"],
  [
    `postgresql://u:${SECRET}@db.example/db?connect_timeout=10`,
    "'connect_timeout', which sqlgate cannot honour",
  ],
  [
    `postgresql://u:${SECRET}@db.example/db?options=-c%20geqo%3Doff`,
    "'options', which sqlgate cannot honour",
  ],
  [
    `postgresql://u:${SECRET}@db.example/db?target_session_attrs=any`,
    "'target_session_attrs', which sqlgate does not accept",
  ],
  [`postgresql://u:${SECRET}@db.example/db?foo=bar`, 'not a libpq keyword (its name is not shown'],
  [
    `postgresql://u:${SECRET}@db.example/db?keepalives=1`,
    "'keepalives', which sqlgate does not accept",
  ],
  // An unencoded '?' in the password: what follows is read as parameters, never shown.
  [`postgresql://u:pass?${SECRET}@db.example/db`, 'not a libpq keyword'],
  [`postgresql://u@db.example/db?password=a&${SECRET}`, 'not a libpq keyword'],
  [
    `postgresql://u:${SECRET}@db.example/db?channel_binding=require`,
    'channel_binding=require, which needs TLS',
  ],
  [
    `postgresql://u:${SECRET}@db.example/db?sslmode=disable&channel_binding=require`,
    'channel_binding=require, which needs TLS',
  ],
  [
    `postgresql://u:${SECRET}@db.example/db?channel_binding=maybe`,
    'a channel_binding that is not one of',
  ],
  [
    `postgresql://u:${SECRET}@db.example/db?sslmode=require&sslmode=disable`,
    "'sslmode' more than once",
  ],
  [`postgresql://u:${SECRET}@db.example/db?ssl=true&sslmode=disable`, "'sslmode' more than once"],
  [`postgresql://u:${SECRET}@db.example/db?sslmode`, "'sslmode' without '='"],
  [`postgresql://u:${SECRET}@db.example/db?options=a=b`, "'options' with a second '='"],
  [`postgresql://u:${SECRET}@ss@db.example/db`, "an '@' after the user name and password"],
  [`postgresql://u:${SECRET}@[not-ipv6]/db`, 'a host in brackets that is not [IPv6 address]'],
  [`postgresql://u:${SECRET}@[::1/db`, 'a host in brackets that is not [IPv6 address]'],
  [`postgresql://u:${SECRET}@[::1]x/db`, 'a host in brackets that is not [IPv6 address]'],
];

describe('connectionTargetOf: refused connection strings', () => {
  it.each(INVALID)('%s', (uri, message) => {
    const error = refusalOf(() => connectionTargetOf(uri));
    expect(error.code).toBe(ErrorCodes.INVALID_REQUEST);
    expect(error.message).toMatch(/^The Neon-Connection-String header /);
    if (typeof message === 'string') expect(error.message).toContain(message);
    else expect(error.message).toMatch(message);
    expect(error.message).not.toContain(SECRET);
  });
});

function refusalOf(read: () => unknown): RequestError {
  try {
    read();
  } catch (error) {
    if (error instanceof RequestError) return error;
    throw error;
  }
  throw new Error('not refused');
}

/** A target as a caller could expect it from any string it accepts. */
function expectWellFormed(found: ConnectionTarget): void {
  expect(Object.keys(found).sort()).toEqual(
    [
      'database',
      'host',
      'port',
      'sslMode',
      'user',
      ...('password' in found ? ['password'] : []),
    ].sort(),
  );
  for (const text of [found.host, found.user, found.database]) {
    expect(typeof text).toBe('string');
    expect(text.length).toBeGreaterThan(0);
    expect(text).not.toMatch(/\0/);
  }
  expect(found.host.length).toBeLessThanOrEqual(255);
  expect(found.host.startsWith('/')).toBe(false);
  expect(found.host).not.toContain(',');
  expect(Number.isInteger(found.port) && found.port >= 1 && found.port <= 65535).toBe(true);
  expect(SSL_MODES).toContain(found.sslMode);
  if (found.password !== undefined) expect(found.password).not.toMatch(/\0/);
}

const PIECES = {
  scheme: ['postgresql://', 'postgres://', 'postgresql:/', 'pg://', 'POSTGRESQL://', ''],
  userinfo: [
    '',
    'u@',
    'u:p@',
    ':p@',
    'u:@',
    'u%40x:p%3A%2F@',
    'u:p@x@',
    '%ZZ@',
    'u:%00@',
    '@',
    'é:ü@',
  ],
  host: [
    '',
    'db.example',
    '127.0.0.1',
    '[::1]',
    '[::1',
    '[x]',
    '%2Ftmp',
    'h1,h2',
    'H%2Eexample',
    '/',
  ],
  port: ['', ':', ':5432', ':0', ':65535', ':65536', ':-1', ':1e3', ':00001', ':5432,5433'],
  path: ['', '/', '/db', '/d%2Fb', '/%FF', '/%00', '/a/b', '/?'],
  parameter: [
    'sslmode=require',
    'sslmode=allow',
    'sslmode=',
    'ssl=true',
    'channel_binding=require',
    'channel_binding=disable',
    'host=other.example',
    'host=%2Fsock',
    'port=6000',
    'port=x',
    'user=v',
    'user=',
    'password=s%26',
    'dbname=d2',
    'application_name=a',
    'unknown=1',
    'novalue',
    'a=b=c',
    '%00=1',
    '',
  ],
  junk: [
    '%',
    '@',
    ':',
    '/',
    '?',
    '&',
    '=',
    '[',
    ']',
    ',',
    '%00',
    '%zz',
    '\u0000',
    '\ud800',
    '#',
    ' ',
  ],
};

function randomConnectionString(random: Random): string {
  const parameters = Array.from({ length: random.int(0, 3) }, () => random.pick(PIECES.parameter));
  let text =
    random.pick(PIECES.scheme) +
    random.pick(PIECES.userinfo) +
    random.pick(PIECES.host) +
    random.pick(PIECES.port) +
    random.pick(PIECES.path) +
    (parameters.length > 0 || random.chance(0.2) ? `?${parameters.join('&')}` : '');
  // Junk spliced in anywhere: what a string built by hand, or cut short, may hold.
  for (let count = random.int(0, 2); count > 0; count--) {
    const at = random.int(0, text.length);
    text = text.slice(0, at) + random.pick(PIECES.junk) + text.slice(at);
  }
  return text;
}

describe('connectionTargetOf: seeded fuzz', () => {
  it('returns a well-formed target or throws a RequestError, for 600 strings built from URI pieces', () => {
    const random = createRandom(20261129);
    let accepted = 0;
    for (let round = 0; round < 600; round++) {
      const uri = randomConnectionString(random);
      let found: ConnectionTarget | undefined;
      try {
        found = connectionTargetOf(uri);
      } catch (error) {
        if (!(error instanceof RequestError)) throw new Error(`${uri}: threw ${String(error)}`);
        expect(error.code).toBe(ErrorCodes.INVALID_REQUEST);
        continue;
      }
      expectWellFormed(found);
      accepted++;
    }
    // The pieces build valid strings too: the fuzz reaches past the first refusal.
    expect(accepted).toBeGreaterThan(0);
  });
});

const TEXT_CHARACTERS = [
  ...'abcXYZ019_-.',
  ...' @:/%?#&=+[],;\'"\\$!*()~',
  'é',
  'ß',
  '€',
  '日',
  '😀',
];

function randomText(random: Random, min: number, max: number): string {
  return Array.from({ length: random.int(min, max) }, () => random.pick(TEXT_CHARACTERS)).join('');
}

function randomHost(random: Random): { host: string; written: string } {
  const kind = random.int(0, 2);
  if (kind === 0) {
    const address = Array.from({ length: 4 }, () => random.int(0, 255)).join('.');
    return { host: address, written: address };
  }
  if (kind === 1) {
    const groups = Array.from({ length: 8 }, () => random.int(0, 0xffff).toString(16));
    const address = random.chance(0.5) ? groups.join(':') : `${groups[0]}::${groups[7]}`;
    return { host: address, written: `[${address}]` };
  }
  const labels = Array.from({ length: random.int(1, 4) }, () =>
    Array.from({ length: random.int(1, 20) }, () => random.pick([...'abcdefxyz0189-'])).join(''),
  );
  const name = labels.join('.');
  return { host: name, written: encodeURIComponent(name) };
}

describe('connectionTargetOf: round trip', () => {
  it('reads back 300 random targets written into URIs with encodeURIComponent', () => {
    const random = createRandom(5432);
    for (let round = 0; round < 300; round++) {
      const { host, written } = randomHost(random);
      const expected: ConnectionTarget = {
        host,
        port: random.int(1, 65535),
        user: randomText(random, 1, 12),
        database: randomText(random, 1, 12),
        sslMode: random.pick(SSL_MODES),
      };
      if (random.chance(0.7)) expected.password = randomText(random, 0, 16);
      const userinfo =
        encodeURIComponent(expected.user) +
        (expected.password === undefined ? '' : `:${encodeURIComponent(expected.password)}`);
      const uri =
        `${random.pick(['postgresql://', 'postgres://'])}${userinfo}@${written}:${expected.port}` +
        `/${encodeURIComponent(expected.database)}?sslmode=${expected.sslMode}`;
      expect(connectionTargetOf(uri)).toEqual(expected);
    }
  });
});
