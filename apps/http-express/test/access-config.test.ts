import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../src/config';
import { parseAccessConfig, readAccessConfig, type AccessConfig } from '../src/access/config-file';

const KEY_SECRET = 'k3y-secret-0123456789';
const JWT_SECRET = 'jwt-secret-0123456789abcdefghijklmnop';
const URL_PASSWORD = 'pw-of-the-url';

function minimal(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    connections: {
      app: { url: `postgresql://app_login:${URL_PASSWORD}@db:5432/app?sslmode=verify-full` },
    },
    keys: [{ id: 'web', secret: KEY_SECRET, connections: ['app'] }],
    ...overrides,
  };
}

function key(fields: Record<string, unknown>): Record<string, unknown> {
  return minimal({ keys: [{ id: 'web', secret: KEY_SECRET, connections: ['app'], ...fields }] });
}

function jwt(fields: Record<string, unknown>): Record<string, unknown> {
  return minimal({ jwt: { secret: JWT_SECRET, connections: ['app'], ...fields } });
}

/** The lines of the ConfigError `json` gives, without the heading. */
function mistakesOf(
  json: unknown,
  env: Record<string, string | undefined> = {},
  readFile?: (path: string) => string,
): string[] {
  try {
    parseAccessConfig(json, env, readFile);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    const [heading, ...lines] = (error as Error).message.split('\n');
    expect(heading).toBe(
      `CONFIG_FILE has ${lines.length} mistake${lines.length === 1 ? '' : 's'}:`,
    );
    return lines.map((line) => line.trim());
  }
  throw new Error('no ConfigError');
}

describe('a valid configuration', () => {
  it('reads the example of docs/access.md', () => {
    const docs = readFileSync(join(__dirname, '../../../docs/access.md'), 'utf8');
    const example = /```json\n([\s\S]*?)```/.exec(docs)![1]!;
    const config = parseAccessConfig(
      JSON.parse(example),
      { APP_DATABASE_URL: 'postgresql://app_login:pw@db:5432/app?sslmode=verify-full' },
      () => `${KEY_SECRET}\n`,
    );
    expect([...config.connections.keys()]).toEqual(['app', 'reports']);
    expect(config.keys.map((key) => key.id)).toEqual(['web', 'nightly-report']);
    expect(config.jwt).toMatchObject({ algorithms: ['RS256'], roleClaim: 'app_metadata.role' });
  });

  it('reads every field into typed rules', () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const config = parseAccessConfig(
      {
        connections: {
          app: { url: { env: 'APP_URL' } },
          'reports.ro': { url: 'postgres://reader@replica/reports' },
        },
        keys: [
          {
            id: 'web',
            secret: { file: '/run/secrets/web' },
            connections: ['app'],
            role: 'web_anon',
            allow: 'read',
            rate: '50/s',
            concurrency: 4,
            maxRows: 1000,
            timeoutMs: 5000,
          },
          {
            id: 'reports',
            secretHash: `sha256:${'AB'.repeat(32)}`,
            connections: ['app', 'reports.ro'],
            allow: {
              queries: ['SELECT 1', { id: 'top', sql: 'SELECT * FROM top LIMIT $1' }],
            },
            rate: { rate: '600/min', burst: 100 },
          },
        ],
        jwt: {
          publicKey: pem,
          audience: 'sqlgate',
          issuer: 'https://issuer.example',
          roleClaim: 'app_metadata.role',
          defaultRole: 'web_anon',
          connections: ['app'],
          rate: '10/h',
        },
      },
      { APP_URL: `postgresql://app_login:${URL_PASSWORD}@db:5432/app?sslmode=verify-full` },
      (path) => (path === '/run/secrets/web' ? `${KEY_SECRET}\n` : 'unexpected'),
    );
    expect(config.connections.get('app')).toEqual({
      name: 'app',
      target: {
        host: 'db',
        port: 5432,
        user: 'app_login',
        password: URL_PASSWORD,
        database: 'app',
        sslMode: 'verify-full',
      },
    });
    expect(config.connections.get('reports.ro')?.target).toMatchObject({
      user: 'reader',
      database: 'reports',
      sslMode: 'prefer',
    });
    const [web, reports] = config.keys;
    expect(web).toMatchObject({
      id: 'web',
      role: 'web_anon',
      allow: 'read',
      rate: { tokens: 50, perMs: 1000, burst: 50 },
      concurrency: 4,
      maxRows: 1000,
      timeoutMs: 5000,
    });
    // The file's trailing newline is not part of the secret.
    expect(Buffer.from(web!.secretDigest)).toEqual(
      createHash('sha256').update(KEY_SECRET).digest(),
    );
    expect([...web!.connections]).toEqual(['app']);
    expect(Buffer.from(reports!.secretDigest).toString('hex')).toBe('ab'.repeat(32));
    expect(reports!.rate).toEqual({ tokens: 600, perMs: 60_000, burst: 100 });
    const allow = reports!.allow;
    if (typeof allow === 'string') throw new Error('expected a query list');
    expect([...allow.queries]).toEqual([
      ['SELECT 1', undefined],
      ['SELECT * FROM top LIMIT $1', 'top'],
    ]);
    expect([...allow.byId]).toEqual([['top', 'SELECT * FROM top LIMIT $1']]);
    expect(config.jwt).toMatchObject({
      roleClaim: 'app_metadata.role',
      defaultRole: 'web_anon',
      audience: 'sqlgate',
      issuer: 'https://issuer.example',
      algorithms: ['ES256'],
      key: { kind: 'publicKey', pem },
      allow: 'all',
      rate: { tokens: 10, perMs: 3_600_000, burst: 10 },
    });
  });

  it('is frozen, its maps and sets included', () => {
    const config: AccessConfig = parseAccessConfig(minimal(), {});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.keys)).toBe(true);
    expect(Object.isFrozen(config.keys[0])).toBe(true);
    expect(() => (config.connections as Map<string, unknown>).set('x', {})).toThrow(TypeError);
    expect(() => (config.keys[0]!.connections as Set<string>).add('x')).toThrow(TypeError);
    expect(config.connections.size).toBe(1);
  });

  it('defaults: allow all, roleClaim role, HS256 for a secret, RS256 for an RSA key, a JWKS any of RS256 ES256 EdDSA', () => {
    const config = parseAccessConfig(jwt({}), {});
    expect(config.keys[0]!.allow).toBe('all');
    expect(config.keys[0]!.rate).toBeUndefined();
    expect(config.jwt).toMatchObject({ allow: 'all', roleClaim: 'role', algorithms: ['HS256'] });
    expect(Buffer.from((config.jwt!.key as { secret: Uint8Array }).secret).toString()).toBe(
      JWT_SECRET,
    );
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(
      parseAccessConfig(jwt({ secret: undefined, publicKey: pem }), {}).jwt!.algorithms,
    ).toEqual(['RS256']);
    const ed = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' });
    expect(
      parseAccessConfig(jwt({ secret: undefined, publicKey: ed.toString() }), {}).jwt!.algorithms,
    ).toEqual(['EdDSA']);
    const jwks = parseAccessConfig(
      jwt({ secret: undefined, jwksUrl: 'https://issuer.example/.well-known/jwks.json' }),
      {},
    ).jwt!;
    expect(jwks.algorithms).toEqual(['RS256', 'ES256', 'EdDSA']);
    expect(jwks.key).toEqual({
      kind: 'jwks',
      url: new URL('https://issuer.example/.well-known/jwks.json'),
    });
  });

  it('a configuration with only a jwt and no keys is valid', () => {
    const noKeys = minimal({ keys: undefined, jwt: { secret: JWT_SECRET, connections: ['app'] } });
    delete noKeys.keys;
    expect(parseAccessConfig(noKeys, {}).keys).toEqual([]);
  });
});

describe('every mistake has its line, naming where it is', () => {
  it.each<[string, Record<string, unknown>, string]>([
    [
      'a rate in no known unit',
      key({ rate: '50/x' }),
      `keys[0].rate: '50/x' is not a rate like "50/s" or "600/min" (N/s, N/min or N/h, N at least 1)`,
    ],
    ['a rate of 0', key({ rate: '0/s' }), `keys[0].rate: '0/s' is not a rate`],
    [
      'a burst of 0',
      key({ rate: { rate: '5/s', burst: 0 } }),
      'keys[0].rate.burst: must be an integer of at least 1, not 0',
    ],
    [
      'a fractional burst',
      key({ rate: { rate: '5/s', burst: 1.5 } }),
      'keys[0].rate.burst: must be an integer of at least 1, not 1.5',
    ],
    [
      'a typo in a rate object',
      key({ rate: { rate: '5/s', brust: 10 } }),
      'keys[0].rate.brust: is not a known field; known here: rate, burst',
    ],
    [
      'a concurrency of 0',
      key({ concurrency: 0 }),
      'keys[0].concurrency: must be an integer from 1 to',
    ],
    [
      'maxRows as a string',
      key({ maxRows: '1000' }),
      'keys[0].maxRows: must be an integer from 1 to 9007199254740991, not a string',
    ],
    [
      'a fractional timeoutMs',
      key({ timeoutMs: 2.5 }),
      'keys[0].timeoutMs: must be an integer from 1 to 2147483647, not 2.5',
    ],
    [
      'a too short secret',
      key({ secret: 'short' }),
      "keys[0].secret: is too short: a key's secret must be at least 16 characters",
    ],
    [
      'a secret with a space',
      key({ secret: 'a secret with spaces' }),
      'keys[0].secret: must be printable ASCII without spaces',
    ],
    [
      'both secret and secretHash',
      key({ secretHash: `sha256:${'0'.repeat(64)}` }),
      'keys[0]: must have exactly one of secret and secretHash',
    ],
    [
      'a malformed secretHash',
      key({ secret: undefined, secretHash: 'sha256:abc' }),
      'keys[0].secretHash: must be "sha256:" followed by 64 hex digits',
    ],
    [
      'a key naming no connection',
      key({ connections: [] }),
      "keys[0].connections: must list at least one connection's name",
    ],
    [
      'a key without connections',
      key({ connections: undefined }),
      "keys[0].connections: must list at least one connection's name, not be missing",
    ],
    [
      'a key naming an unknown connection',
      key({ connections: ['app', 'nope'] }),
      "keys[0].connections[1]: 'nope' is not one of the connections",
    ],
    ['an empty role', key({ role: '' }), 'keys[0].role: must be a non-empty role name'],
    [
      'a role of 64 bytes',
      key({ role: 'r'.repeat(64) }),
      "keys[0].role: is longer than PostgreSQL's 63 bytes for a role name",
    ],
    [
      'an unknown allow',
      key({ allow: 'everything' }),
      `keys[0].allow: must be "read", "write", "all" or {"queries": [...]}, not 'everything'`,
    ],
    [
      'an empty query list',
      key({ allow: { queries: [] } }),
      'keys[0].allow.queries: must list at least one query',
    ],
    [
      'an empty query',
      key({ allow: { queries: ['SELECT 1', '  '] } }),
      'keys[0].allow.queries[1]: must be a non-empty SQL text',
    ],
    [
      'a query without sql',
      key({ allow: { queries: [{ id: 'a' }] } }),
      'keys[0].allow.queries[0].sql: must be a non-empty SQL text',
    ],
    [
      'a query id with a space',
      key({ allow: { queries: [{ id: 'a b', sql: 'SELECT 1' }] } }),
      'keys[0].allow.queries[0].id: is not a valid query id',
    ],
    [
      'a query id twice',
      key({
        allow: {
          queries: [
            { id: 'a', sql: 'SELECT 1' },
            { id: 'a', sql: 'SELECT 2' },
          ],
        },
      }),
      "keys[0].allow.queries[1].id: 'a' is also the id of keys[0].allow.queries[0]: ids must be unique",
    ],
    [
      'a query twice',
      key({ allow: { queries: ['SELECT 1', 'SELECT 1'] } }),
      'keys[0].allow.queries[1]: has the same SQL as keys[0].allow.queries[0]',
    ],
    [
      'a typo in allow',
      key({ allow: { query: ['SELECT 1'] } }),
      'keys[0].allow.query: is not a known field; known here: queries',
    ],
    [
      'a typo in a key',
      key({ maxrows: 10 }),
      'keys[0].maxrows: is not a known field; known here: id, secret, secretHash, role, connections, allow, rate, concurrency, maxRows, timeoutMs',
    ],
    [
      'a key id with a slash',
      key({ id: 'a/b' }),
      'keys[0].id: is not a valid key id: it must be 1 to 63 letters, digits, _ . or -',
    ],
    ['a key without id', key({ id: undefined }), 'keys[0].id: is missing'],
    ['keys as an object', minimal({ keys: {} }), 'keys: must be a list of keys, not an object'],
    [
      'a typo at the top',
      minimal({ jwts: {} }),
      'jwts: is not a known field; known here: connections, keys, jwt',
    ],
    ['no connections', minimal({ connections: undefined }), 'connections: is missing'],
    [
      'no connection at all',
      minimal({ connections: {}, keys: [] }),
      'connections: must be an object naming at least one connection',
    ],
    [
      'a connection name with a space',
      minimal({ connections: { 'a b': { url: 'postgresql://u@h/d' } }, keys: [] }),
      'connections["a b"]: is not a valid connection name',
    ],
    [
      'a connection without url',
      minimal({ connections: { app: {} } }),
      'connections.app.url: is missing',
    ],
    [
      'a typo in a connection',
      minimal({ connections: { app: { url: 'postgresql://u@h/d', ssl: true } } }),
      'connections.app.ssl: is not a known field; known here: url',
    ],
    [
      'a connection URI without user',
      minimal({ connections: { app: { url: 'postgresql://db/app' } } }),
      'connections.app.url: the URI names no user: write postgresql://user@host/dbname',
    ],
    [
      'a connection URI of another scheme',
      minimal({ connections: { app: { url: 'mysql://u:p@h/d' } } }),
      'connections.app.url: the URI must be a connection URI starting with postgresql://',
    ],
    [
      'no keys and no jwt',
      minimal({ keys: [] }),
      'the file has no keys and no jwt: nobody could use its connections',
    ],
    [
      'a jwt with two keys',
      jwt({ jwksUrl: 'https://a.example/jwks' }),
      'jwt: must have exactly one of secret, jwksUrl and publicKey, not secret and jwksUrl',
    ],
    [
      'a jwt without key',
      jwt({ secret: undefined }),
      'jwt: must have exactly one of secret, jwksUrl and publicKey',
    ],
    [
      'a short jwt secret',
      jwt({ secret: 'x'.repeat(31) }),
      'jwt.secret: is too short: an HMAC secret must be at least 32 bytes (RFC 7518 3.2)',
    ],
    [
      'a JWKS over http',
      jwt({ secret: undefined, jwksUrl: 'http://issuer.example/jwks' }),
      'jwt.jwksUrl: must be an https:// URL (http:// only to localhost)',
    ],
    [
      'a JWKS URL that is no URL',
      jwt({ secret: undefined, jwksUrl: 'issuer' }),
      'jwt.jwksUrl: must be an https:// URL',
    ],
    [
      'a public key that is no PEM',
      jwt({ secret: undefined, publicKey: 'not a key' }),
      'jwt.publicKey: is not a PEM public key',
    ],
    [
      'an RS256 pin on a secret',
      jwt({ algorithms: ['RS256'] }),
      "jwt.algorithms: 'RS256' cannot be used with this secret; it takes HS256, HS384, HS512",
    ],
    [
      'alg none',
      jwt({ algorithms: ['none'] }),
      "jwt.algorithms: 'none' cannot be used with this secret",
    ],
    [
      'an HS256 pin on a JWKS',
      jwt({ secret: undefined, jwksUrl: 'https://a.example/jwks', algorithms: ['HS256'] }),
      "jwt.algorithms: 'HS256' cannot be used with this JWKS",
    ],
    [
      'empty algorithms',
      jwt({ algorithms: [] }),
      'jwt.algorithms: must be a non-empty list of algorithm names',
    ],
    [
      'a roleClaim with an empty step',
      jwt({ roleClaim: 'app_metadata..role' }),
      'jwt.roleClaim: must be a claim name, or a dotted path like "app_metadata.role"',
    ],
    [
      'an empty audience',
      jwt({ audience: '' }),
      'jwt.audience: must be a non-empty string, not a string',
    ],
    [
      'a defaultRole of 64 bytes',
      jwt({ defaultRole: 'é'.repeat(32) }),
      "jwt.defaultRole: is longer than PostgreSQL's 63 bytes",
    ],
    ['a typo in jwt', jwt({ audiance: 'x' }), 'jwt.audiance: is not a known field'],
    [
      'a jwt naming no connection',
      jwt({ connections: undefined }),
      "jwt.connections: must list at least one connection's name",
    ],
    ['a jwt rate in no known unit', jwt({ rate: '5/day' }), `jwt.rate: '5/day' is not a rate`],
    [
      'a secret from two sources',
      key({ secret: { env: 'A', file: '/b' } }),
      'keys[0].secret: must be a string, or an object with exactly one field: env or file',
    ],
    [
      'a secret from an unknown source',
      key({ secret: { vault: 'x' } }),
      'keys[0].secret: must be a string, or an object with exactly one field: env or file',
    ],
  ])('%s', (_, json, line) => {
    const startsWithLine = new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
    expect(mistakesOf(json)).toContainEqual(expect.stringMatching(startsWithLine));
  });

  it('an id twice, and a secret twice', () => {
    const mistakes = mistakesOf(
      minimal({
        keys: [
          { id: 'a', secret: KEY_SECRET, connections: ['app'] },
          { id: 'a', secret: 'another-secret-0123', connections: ['app'] },
          { id: 'c', secret: KEY_SECRET, connections: ['app'] },
        ],
      }),
    );
    expect(mistakes).toEqual([
      "keys[1].id: 'a' is also the id of keys[0]: ids must be unique",
      'keys[2]: has the same secret as keys[0]',
    ]);
  });

  it('collects every mistake into one error', () => {
    const mistakes = mistakesOf({
      connections: { app: { url: 'postgresql://db/app' } },
      keys: [
        { id: 'a', secret: 'short', connections: ['app'], rate: '1/y' },
        { id: 'b', secret: KEY_SECRET, connections: ['gone'], concurrency: -1 },
      ],
      extra: true,
    });
    expect(mistakes).toEqual([
      'extra: is not a known field; known here: connections, keys, jwt',
      'connections.app.url: the URI names no user: write postgresql://user@host/dbname',
      "keys[0].secret: is too short: a key's secret must be at least 16 characters",
      `keys[0].rate: '1/y' is not a rate like "50/s" or "600/min" (N/s, N/min or N/h, N at least 1)`,
      "keys[1].connections[0]: 'gone' is not one of the connections",
      'keys[1].concurrency: must be an integer from 1 to 9007199254740991, not -1',
    ]);
  });

  it('a file that is not an object', () => {
    expect(mistakesOf([])).toEqual(['the file must hold a JSON object, not a list']);
  });

  it('a private key given as the public key', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(mistakesOf(jwt({ secret: undefined, publicKey: pem }))).toEqual([
      'jwt.publicKey: holds a private key: give the public key (-----BEGIN PUBLIC KEY-----)',
    ]);
  });

  it('an ES256 public key pinned to RS256 (algorithm confusion)', () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(
      mistakesOf(jwt({ secret: undefined, publicKey: pem, algorithms: ['RS256', 'HS256'] })),
    ).toEqual([
      "jwt.algorithms: 'RS256', 'HS256' cannot be used with this public key; it takes ES256",
    ]);
  });

  it('no line shows a secret, a password or a token-like value', () => {
    const message = (() => {
      try {
        parseAccessConfig(
          {
            connections: { app: { url: `postgresql://u:${URL_PASSWORD}@h:x/d` } },
            keys: [{ id: 'a', secret: 'tooShortSecret', connections: ['app'] }],
            jwt: { secret: 'jwt-too-short', connections: ['app'] },
          },
          {},
        );
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    })();
    expect(message.split('\n')).toHaveLength(4);
    expect(message).not.toContain(URL_PASSWORD);
    expect(message).not.toContain('tooShortSecret');
    expect(message).not.toContain('jwt-too-short');
  });
});

describe('secrets from the environment and from files', () => {
  it('reads {"env": …} and {"file": …} anywhere a secret goes, trimming trailing newlines', () => {
    const { publicKey } = generateKeyPairSync('ed25519');
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const files: Record<string, string> = {
      '/run/secrets/key': `${KEY_SECRET}\r\n\n`,
      '/run/secrets/pem': `${pem}\n`,
    };
    const config = parseAccessConfig(
      minimal({
        connections: { app: { url: { file: '/run/secrets/url' } } },
        keys: [{ id: 'a', secret: { file: '/run/secrets/key' }, connections: ['app'] }],
        jwt: { publicKey: { file: '/run/secrets/pem' }, connections: ['app'] },
      }),
      {},
      (path) => {
        if (path === '/run/secrets/url') return 'postgresql://u:from-file@h/d\n';
        const found = files[path];
        if (found === undefined) throw new Error('no such file');
        return found;
      },
    );
    expect(config.connections.get('app')!.target.password).toBe('from-file');
    expect(Buffer.from(config.keys[0]!.secretDigest)).toEqual(
      createHash('sha256').update(KEY_SECRET).digest(),
    );
    expect(config.jwt!.key).toEqual({ kind: 'publicKey', pem: pem.trimEnd() });

    const fromEnv = parseAccessConfig(jwt({ secret: { env: 'JWT_SECRET' } }), { JWT_SECRET });
    expect(Buffer.from((fromEnv.jwt!.key as { secret: Uint8Array }).secret).toString()).toBe(
      JWT_SECRET,
    );
  });

  it('a variable not set, or a file not readable, is a mistake', () => {
    const mistakes = mistakesOf(
      minimal({
        connections: { app: { url: { env: 'APP_URL' } } },
        keys: [{ id: 'a', secret: { file: '/run/secrets/none' }, connections: ['app'] }],
        jwt: { secret: { env: '' }, connections: ['app'] },
      }),
      { APP_URL: '' },
      () => {
        throw Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT' });
      },
    );
    expect(mistakes).toEqual([
      'connections.app.url.env: the variable APP_URL is not set (or is empty)',
      "keys[0].secret.file: cannot read '/run/secrets/none' (ENOENT)",
      'jwt.secret.env: must be a non-empty string naming a variable',
    ]);
  });
});

describe('readAccessConfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlgate-access-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the file CONFIG_FILE names, with secrets from real files', () => {
    writeFileSync(join(dir, 'key'), `${KEY_SECRET}\n`);
    writeFileSync(
      join(dir, 'access.json'),
      JSON.stringify(
        minimal({ keys: [{ id: 'a', secret: { file: join(dir, 'key') }, connections: ['app'] }] }),
      ),
    );
    const config = readAccessConfig(join(dir, 'access.json'), {});
    expect(Buffer.from(config.keys[0]!.secretDigest)).toEqual(
      createHash('sha256').update(KEY_SECRET).digest(),
    );
  });

  it('a missing file, or one that is not JSON, stops the start with one line', () => {
    expect(() => readAccessConfig(join(dir, 'none.json'), {})).toThrow(ConfigError);
    expect(() => readAccessConfig(join(dir, 'none.json'), {})).toThrow(
      /^CONFIG_FILE must name a readable file, got '.*none\.json'/,
    );
    writeFileSync(join(dir, 'bad.json'), '{"connections": ');
    expect(() => readAccessConfig(join(dir, 'bad.json'), {})).toThrow(/is not JSON/);
  });
});
