import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ErrorCodes, SqlgateError } from '@sqlgate/core';
import {
  SignJWT,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  type JWTPayload,
  type KeyLike,
} from 'jose';
import { parseAccessConfig } from '../src/access/config-file';
import { createAuthenticator, looksLikeJwt, type Caller } from '../src/access/credentials';

const NOW_MS = Date.UTC(2026, 0, 1);
const NOW_S = NOW_MS / 1000;
const now = () => NOW_MS;

const WEB_SECRET = 'web-secret-0123456789';
const REPORTS_SECRET = 'reports-secret-0123456789';
const JWT_SECRET = 'jwt-secret-0123456789abcdefghijklmnopq';
const jwtSecretBytes = new TextEncoder().encode(JWT_SECRET);

function configWith(jwt?: Record<string, unknown>) {
  return parseAccessConfig(
    {
      connections: { app: { url: 'postgresql://app_login:pw@db:5432/app' } },
      keys: [
        { id: 'web', secret: WEB_SECRET, connections: ['app'], role: 'web_anon', allow: 'read' },
        {
          id: 'reports',
          secretHash: `sha256:${createHash('sha256').update(REPORTS_SECRET).digest('hex')}`,
          connections: ['app'],
        },
      ],
      ...(jwt === undefined ? {} : { jwt: { connections: ['app'], ...jwt } }),
    },
    {},
  );
}

function hs256(payload: JWTPayload, secret: Uint8Array = jwtSecretBytes, alg = 'HS256') {
  return new SignJWT(payload).setProtectedHeader({ alg, typ: 'JWT' }).sign(secret);
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** The refusal `authenticate` gives, checked to be UNAUTHORIZED and to show none of `hidden`. */
async function refusal(
  authenticate: (authorization: string | undefined) => Promise<Caller>,
  authorization: string | undefined,
  hidden: readonly string[] = [],
): Promise<string> {
  const error = await authenticate(authorization).then(
    () => {
      throw new Error('accepted');
    },
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(SqlgateError);
  expect((error as SqlgateError).code).toBe(ErrorCodes.UNAUTHORIZED);
  const token = authorization?.replace(/^\S+\s+/, '') ?? '';
  const shown = [
    (error as Error).message,
    JSON.stringify(error),
    JSON.stringify({ ...(error as object), message: (error as Error).message }),
    String((error as Error).stack),
  ].join('\n');
  for (const secret of [...hidden, ...(token.length >= 8 ? [token] : [])]) {
    expect(shown).not.toContain(secret);
  }
  // No piece of a JWT either (its signature, its payload).
  for (const part of token.split('.').filter((piece) => piece.length >= 8)) {
    expect(shown).not.toContain(part);
  }
  return (error as Error).message;
}

describe('the Authorization header', () => {
  const authenticate = createAuthenticator(configWith({ secret: JWT_SECRET }), { now });

  it.each([undefined, '', '   '])('%p: credentials are required', async (header) => {
    expect(await refusal(authenticate, header)).toBe(
      'Credentials are required: send Authorization: Bearer <API key or JWT>',
    );
  });

  it.each([
    `Basic ${WEB_SECRET}`,
    'Bearer',
    `Bearer  ${WEB_SECRET}`,
    `Bearer ${WEB_SECRET} extra`,
    `Bearer${WEB_SECRET}`,
    WEB_SECRET,
  ])('%p is not "Bearer <token>"', async (header) => {
    expect(await refusal(authenticate, header, [WEB_SECRET])).toBe(
      'The Authorization header must be "Bearer <API key or JWT>"',
    );
  });

  it('takes the scheme in any case', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      expect((await authenticate(`${scheme} ${WEB_SECRET}`)).id).toBe('web');
    }
  });
});

describe('API keys', () => {
  const authenticate = createAuthenticator(configWith(), { now });

  it('the right secret names its key, its rules and role', async () => {
    const caller = await authenticate(`Bearer ${WEB_SECRET}`);
    expect(caller).toMatchObject({ kind: 'key', id: 'web', role: 'web_anon', limitKey: 'key:web' });
    expect(caller.rules.allow).toBe('read');
    expect(caller.claims).toBeUndefined();
  });

  it('a key given by secretHash is known by its secret', async () => {
    const caller = await authenticate(`Bearer ${REPORTS_SECRET}`);
    expect(caller).toMatchObject({ kind: 'key', id: 'reports', limitKey: 'key:reports' });
    expect(caller.role).toBeUndefined();
  });

  it.each([
    ['a wrong secret', 'wrong-secret-0123456789'],
    ['a prefix of a secret', WEB_SECRET.slice(0, -1)],
    ['a secret with one more character', `${WEB_SECRET}x`],
    ['the hash given as the secret', createHash('sha256').update(REPORTS_SECRET).digest('hex')],
  ])('%s is refused without saying how close it was', async (_, token) => {
    expect(await refusal(authenticate, `Bearer ${token}`, [WEB_SECRET, REPORTS_SECRET])).toBe(
      'Unknown or invalid credentials',
    );
  });

  it('a JWT where no jwt is configured is refused as an unknown key', async () => {
    const token = await hs256({ role: 'x' });
    expect(await refusal(authenticate, `Bearer ${token}`)).toBe('Unknown or invalid credentials');
  });
});

describe('telling a JWT from an API key', () => {
  it('three base64url parts whose header is a JSON object', async () => {
    expect(looksLikeJwt(await hs256({}))).toBe(true);
    expect(looksLikeJwt(`${base64url({ alg: 'none' })}.${base64url({})}.`)).toBe(true);
    expect(looksLikeJwt(WEB_SECRET)).toBe(false);
    expect(looksLikeJwt('a.b.c')).toBe(false);
    expect(looksLikeJwt(`${base64url([1])}.${base64url({})}.x`)).toBe(false);
    expect(looksLikeJwt(`${base64url({ alg: 'HS256' })}.${base64url({})}`)).toBe(false);
    expect(looksLikeJwt(`${base64url({ alg: 'HS256' })}.${base64url({})}.a+b`)).toBe(false);
  });
});

describe('JWTs signed with a secret (HS256)', () => {
  const config = configWith({
    secret: JWT_SECRET,
    audience: 'sqlgate',
    issuer: 'https://issuer.example',
  });
  const authenticate = createAuthenticator(config, { now });
  const valid = { aud: 'sqlgate', iss: 'https://issuer.example', exp: NOW_S + 60, iat: NOW_S };

  it('a valid token names its subject, role and claims', async () => {
    const caller = await authenticate(
      `Bearer ${await hs256({ ...valid, sub: 'u-1', role: 'web_user' })}`,
    );
    expect(caller).toMatchObject({
      kind: 'jwt',
      id: 'u-1',
      role: 'web_user',
      limitKey: 'jwt:u-1',
      claims: { sub: 'u-1', role: 'web_user', aud: 'sqlgate' },
    });
    expect(caller.rules).toBe(config.jwt);
  });

  it('a token without sub is counted as jwt', async () => {
    const caller = await authenticate(`Bearer ${await hs256({ ...valid, role: 'web_user' })}`);
    expect(caller).toMatchObject({ id: 'jwt', limitKey: 'jwt:jwt' });
  });

  it('exp and nbf within the 5 s tolerance are accepted', async () => {
    const token = await hs256({ ...valid, role: 'r', exp: NOW_S - 4, nbf: NOW_S + 4 });
    expect((await authenticate(`Bearer ${token}`)).role).toBe('r');
  });

  it.each<[string, JWTPayload, string]>([
    ['expired', { ...valid, role: 'r', exp: NOW_S - 6 }, 'The token has expired'],
    ['not yet valid', { ...valid, role: 'r', nbf: NOW_S + 6 }, 'The token is not valid yet'],
    [
      'for another audience',
      { ...valid, role: 'r', aud: 'other' },
      'The token is not meant for this service (audience)',
    ],
    [
      'without audience',
      { exp: NOW_S + 60, iss: valid.iss, role: 'r' },
      'The token is not meant for this service (audience)',
    ],
    [
      'from another issuer',
      { ...valid, role: 'r', iss: 'https://evil.example' },
      'The token is from an issuer this service does not accept',
    ],
    ['without role', { ...valid }, 'The token names no role'],
    [
      'with a numeric role',
      { ...valid, role: 42 },
      'The token names a role that is not a role name',
    ],
    [
      'with an empty role',
      { ...valid, role: '' },
      'The token names a role that is not a role name',
    ],
    [
      'with a role of 64 bytes',
      { ...valid, role: 'r'.repeat(64) },
      'The token names a role that is not a role name',
    ],
  ])('a token %s is refused', async (_, payload, message) => {
    const token = await hs256(payload);
    expect(await refusal(authenticate, `Bearer ${token}`, [JWT_SECRET])).toBe(message);
  });

  it('a token signed with another secret is refused', async () => {
    const token = await hs256({ ...valid, role: 'r' }, new TextEncoder().encode('x'.repeat(32)));
    expect(await refusal(authenticate, `Bearer ${token}`, [JWT_SECRET])).toBe('Invalid token');
  });

  it('a tampered signature or payload is refused', async () => {
    const token = await hs256({ ...valid, role: 'web_user' });
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const flipped = `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`;
    expect(await refusal(authenticate, `Bearer ${header}.${payload}.${flipped}`)).toBe(
      'Invalid token',
    );
    const raised = base64url({ ...valid, role: 'postgres' });
    expect(await refusal(authenticate, `Bearer ${header}.${raised}.${signature}`)).toBe(
      'Invalid token',
    );
  });

  it('alg none, crafted by hand, is refused', async () => {
    const payload = base64url({ ...valid, role: 'postgres' });
    for (const alg of ['none', 'None', 'NONE']) {
      const token = `${base64url({ alg, typ: 'JWT' })}.${payload}.`;
      expect(await refusal(authenticate, `Bearer ${token}`)).toBe('Invalid token');
    }
  });

  it('an algorithm outside the pinned list is refused, even with the right secret', async () => {
    const token = await hs256({ ...valid, role: 'r' }, jwtSecretBytes, 'HS512');
    expect(await refusal(authenticate, `Bearer ${token}`, [JWT_SECRET])).toBe('Invalid token');
  });

  it('a role at a dotted path, and the default role', async () => {
    const nested = createAuthenticator(
      configWith({ secret: JWT_SECRET, roleClaim: 'app_metadata.role' }),
      { now },
    );
    const token = await hs256({ exp: NOW_S + 60, app_metadata: { role: 'editor' }, role: 'x' });
    expect((await nested(`Bearer ${token}`)).role).toBe('editor');
    for (const claims of [{ role: 'x' }, { app_metadata: 'editor' }, { app_metadata: null }]) {
      expect(await refusal(nested, `Bearer ${await hs256({ exp: NOW_S + 60, ...claims })}`)).toBe(
        'The token names no role',
      );
    }
    expect(
      await refusal(
        nested,
        `Bearer ${await hs256({ exp: NOW_S + 60, app_metadata: { role: [] } })}`,
      ),
    ).toBe('The token names a role that is not a role name');
    // The prototype is not a claim.
    const proto = createAuthenticator(
      configWith({ secret: JWT_SECRET, roleClaim: 'constructor.name' }),
      { now },
    );
    expect(await refusal(proto, `Bearer ${await hs256({ exp: NOW_S + 60 })}`)).toBe(
      'The token names no role',
    );

    const withDefault = createAuthenticator(
      configWith({ secret: JWT_SECRET, defaultRole: 'web_anon' }),
      { now },
    );
    expect((await withDefault(`Bearer ${await hs256({ exp: NOW_S + 60 })}`)).role).toBe('web_anon');
    // A role claim that is there but wrong is not replaced by the default.
    expect(await refusal(withDefault, `Bearer ${await hs256({ exp: NOW_S + 60, role: 7 })}`)).toBe(
      'The token names a role that is not a role name',
    );
  });
});

describe('JWTs signed with a private key', () => {
  let rsa: { publicKey: KeyLike; privateKey: KeyLike };
  let pem: string;
  beforeAll(async () => {
    rsa = await generateKeyPair('RS256', { extractable: true });
    pem = await exportSPKI(rsa.publicKey);
  });

  it('RS256 through publicKey', async () => {
    const authenticate = createAuthenticator(configWith({ publicKey: pem }), { now });
    const token = await new SignJWT({ sub: 'u-2', role: 'web_user', exp: NOW_S + 60 })
      .setProtectedHeader({ alg: 'RS256' })
      .sign(rsa.privateKey);
    expect(await authenticate(`Bearer ${token}`)).toMatchObject({
      kind: 'jwt',
      id: 'u-2',
      role: 'web_user',
    });
  });

  it('an HS256 token keyed with the public key is refused (algorithm confusion)', async () => {
    const authenticate = createAuthenticator(configWith({ publicKey: pem }), { now });
    const forged = await hs256(
      { sub: 'u-2', role: 'postgres', exp: NOW_S + 60 },
      new TextEncoder().encode(pem),
    );
    expect(await refusal(authenticate, `Bearer ${forged}`)).toBe('Invalid token');
  });

  it('a token signed by another private key is refused', async () => {
    const authenticate = createAuthenticator(configWith({ publicKey: pem }), { now });
    const other = await generateKeyPair('RS256');
    const token = await new SignJWT({ role: 'web_user', exp: NOW_S + 60 })
      .setProtectedHeader({ alg: 'RS256' })
      .sign(other.privateKey);
    expect(await refusal(authenticate, `Bearer ${token}`)).toBe('Invalid token');
  });
});

describe('JWTs verified by a JWKS', () => {
  let server: Server;
  let url: string;
  let signing: { publicKey: KeyLike; privateKey: KeyLike };
  let answerStatus = 200;
  let served = 0;

  beforeAll(async () => {
    signing = await generateKeyPair('ES256', { extractable: true });
    const jwk = { ...(await exportJWK(signing.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    server = createServer((request, response) => {
      served += 1;
      if (request.url !== '/.well-known/jwks.json' || answerStatus !== 200) {
        response.writeHead(answerStatus === 200 ? 404 : answerStatus).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve, reject) =>
      server.close((error) => (error ? reject(error) : resolve())),
    );
  });

  function es256(payload: JWTPayload, key: KeyLike = signing.privateKey, kid = 'k1') {
    return new SignJWT(payload).setProtectedHeader({ alg: 'ES256', kid }).sign(key);
  }

  it('a token signed by a key of the set is accepted', async () => {
    const authenticate = createAuthenticator(configWith({ jwksUrl: url }), { now });
    const token = await es256({ sub: 'u-3', role: 'web_user', exp: NOW_S + 60 });
    expect(await authenticate(`Bearer ${token}`)).toMatchObject({ id: 'u-3', role: 'web_user' });
  });

  it('a token signed by a key outside the set, or an HS256 one, is refused', async () => {
    const authenticate = createAuthenticator(configWith({ jwksUrl: url }), { now });
    const stranger = await generateKeyPair('ES256');
    expect(
      await refusal(
        authenticate,
        `Bearer ${await es256({ role: 'r', exp: NOW_S + 60 }, stranger.privateKey)}`,
      ),
    ).toBe('Invalid token');
    expect(
      await refusal(
        authenticate,
        `Bearer ${await es256({ role: 'r', exp: NOW_S + 60 }, stranger.privateKey, 'k2')}`,
      ),
    ).toBe('Invalid token');
    const hs = await new SignJWT({ role: 'r', exp: NOW_S + 60 })
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .sign(jwtSecretBytes);
    expect(await refusal(authenticate, `Bearer ${hs}`)).toBe('Invalid token');
  });

  it('a JWKS that cannot be fetched says so, not that the token is bad', async () => {
    const authenticate = createAuthenticator(configWith({ jwksUrl: url }), { now });
    const token = await es256({ role: 'r', exp: NOW_S + 60 });
    answerStatus = 500;
    const before = served;
    try {
      expect(await refusal(authenticate, `Bearer ${token}`)).toBe(
        'The token could not be verified now: its keys could not be fetched',
      );
    } finally {
      answerStatus = 200;
    }
    expect(served).toBeGreaterThan(before);
  });
});
