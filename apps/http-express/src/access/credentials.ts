/**
 * Who is calling: the `Authorization: Bearer <token>` header checked against the access
 * configuration (docs/access.md), as an API key or a JWT. Every refusal is UNAUTHORIZED with a
 * message that names no token or secret and does not tell which part of a guess was right.
 */
import { createHash, createPublicKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { ErrorCodes, SqlgateError } from '@sqlgate/core';
import type { AccessConfig, ApiKey, JwtRules } from './config-file';

export type Caller =
  | {
      kind: 'key';
      id: string;
      rules: ApiKey;
      role?: string;
      claims?: undefined;
      /** `key:<id>`: what the key's rate and concurrency are counted under. */
      limitKey: string;
    }
  | {
      kind: 'jwt';
      /** The `sub` claim, or `jwt` when the token has none. */
      id: string;
      rules: JwtRules;
      role: string;
      claims: Record<string, unknown>;
      /** `jwt:<sub>`: each subject is counted on its own. */
      limitKey: string;
    };

export interface AuthenticatorOptions {
  /** The clock JWTs' exp and nbf are checked against, in milliseconds. */
  now?: () => number;
}

export type Authenticate = (authorization: string | undefined) => Promise<Caller>;

/** exp and nbf may be off by this much between the issuer's clock and ours. */
const CLOCK_TOLERANCE_SECONDS = 5;
const UNKNOWN = 'Unknown or invalid credentials';
const INVALID_TOKEN = 'Invalid token';
const MAX_ROLE_BYTES = 63;

function refused(message: string): SqlgateError {
  return new SqlgateError(ErrorCodes.UNAUTHORIZED, message);
}

export function createAuthenticator(
  config: AccessConfig,
  options: AuthenticatorOptions = {},
): Authenticate {
  const now = options.now ?? Date.now;
  const jwt = config.jwt;
  const jwtKey = jwt === undefined ? undefined : verificationKeyOf(jwt);
  return async (authorization) => {
    const token = bearerToken(authorization);
    if (looksLikeJwt(token)) {
      if (jwt === undefined || jwtKey === undefined) throw refused(UNKNOWN);
      return await jwtCaller(token, jwt, jwtKey, now);
    }
    return keyCaller(token, config.keys);
  };
}

/** The token of `Bearer <token>` (the scheme in any case), or a refusal. */
function bearerToken(authorization: string | undefined): string {
  if (authorization === undefined || authorization.trim() === '') {
    throw refused('Credentials are required: send Authorization: Bearer <API key or JWT>');
  }
  const found = /^([A-Za-z]+) (\S+)$/.exec(authorization.trim());
  if (found === null || found[1]!.toLowerCase() !== 'bearer') {
    throw refused('The Authorization header must be "Bearer <API key or JWT>"');
  }
  return found[2]!;
}

/** Three base64url parts whose first decodes to a JSON object: a JWS in compact form. */
export function looksLikeJwt(token: string): boolean {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((part) => /^[A-Za-z0-9_-]*$/.test(part))) return false;
  if (parts[0] === '' || parts[1] === '') return false;
  try {
    const header: unknown = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && !Array.isArray(header);
  } catch {
    return false;
  }
}

/**
 * The key whose secret `token` is. Its sha256 is compared with every key's, each comparison in
 * constant time and none skipped, so the time taken does not tell which key or how much matched.
 */
function keyCaller(token: string, keys: readonly ApiKey[]): Caller {
  const digest = createHash('sha256').update(token).digest();
  let found: ApiKey | undefined;
  for (const key of keys) {
    const same = timingSafeEqual(digest, key.secretDigest);
    found = same ? key : found;
  }
  if (found === undefined) throw refused(UNKNOWN);
  const caller: Caller = { kind: 'key', id: found.id, rules: found, limitKey: `key:${found.id}` };
  if (found.role !== undefined) caller.role = found.role;
  return caller;
}

type VerificationKey = Uint8Array | KeyObject | JWTVerifyGetKey;

function verificationKeyOf(jwt: JwtRules): VerificationKey {
  const key = jwt.key;
  if (key.kind === 'secret') return key.secret;
  if (key.kind === 'publicKey') return createPublicKey(key.pem);
  // jose keeps the fetched set and refetches it when a token names a key it does not hold.
  const remote = createRemoteJWKSet(key.url);
  return async (header, token) => {
    try {
      return await remote(header, token);
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey) throw error;
      if (error instanceof errors.JWKSMultipleMatchingKeys) throw error;
      if (error instanceof errors.JOSENotSupported) throw error;
      throw new KeysUnavailable();
    }
  };
}

/** The JWKS could not be fetched or read: a fault of the key set, not of the token. */
class KeysUnavailable extends Error {}

async function jwtCaller(
  token: string,
  jwt: JwtRules,
  key: VerificationKey,
  now: () => number,
): Promise<Caller> {
  // base64url leaves spare bits in a last character: one signature has several spellings, and a
  // token must have one (anything keyed on its text, a log or a deny-list, would miss the others).
  const signature = token.slice(token.lastIndexOf('.') + 1);
  if (Buffer.from(signature, 'base64url').toString('base64url') !== signature) {
    throw refused(INVALID_TOKEN);
  }
  const payload = await verifiedPayload(token, jwt, key, now);
  const role = roleOf(payload, jwt);
  const sub = typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : 'jwt';
  return {
    kind: 'jwt',
    id: sub,
    rules: jwt,
    role,
    claims: payload as Record<string, unknown>,
    limitKey: `jwt:${sub}`,
  };
}

async function verifiedPayload(
  token: string,
  jwt: JwtRules,
  key: VerificationKey,
  now: () => number,
): Promise<JWTPayload> {
  const options = {
    // Pinned: the token's own `alg` header is never trusted to pick how it is checked.
    algorithms: [...jwt.algorithms],
    clockTolerance: CLOCK_TOLERANCE_SECONDS,
    currentDate: new Date(now()),
    ...(jwt.audience === undefined ? {} : { audience: jwt.audience }),
    ...(jwt.issuer === undefined ? {} : { issuer: jwt.issuer }),
  };
  try {
    const result =
      typeof key === 'function'
        ? await jwtVerify(token, key, options)
        : await jwtVerify(token, key, options);
    return result.payload;
  } catch (error) {
    throw refused(refusalOf(error));
  }
}

/**
 * What a caller is told about a token that failed: its time window, audience or issuer, which the
 * token's holder can read in it anyway; anything else, only that it is invalid.
 */
function refusalOf(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'The token has expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf') return 'The token is not valid yet';
    if (error.claim === 'aud') return 'The token is not meant for this service (audience)';
    if (error.claim === 'iss') return 'The token is from an issuer this service does not accept';
    return INVALID_TOKEN;
  }
  if (error instanceof KeysUnavailable) {
    // The token may be fine.
    return 'The token could not be verified now: its keys could not be fetched';
  }
  return INVALID_TOKEN;
}

/** The role the claims name at `roleClaim`, or `defaultRole` when they name none. */
function roleOf(payload: JWTPayload, jwt: JwtRules): string {
  const value = claimAt(payload, jwt.roleClaim);
  if (value === undefined) {
    if (jwt.defaultRole !== undefined) return jwt.defaultRole;
    throw refused('The token names no role');
  }
  if (
    typeof value !== 'string' ||
    value === '' ||
    value.includes('\0') ||
    Buffer.byteLength(value, 'utf8') > MAX_ROLE_BYTES
  ) {
    throw refused('The token names a role that is not a role name');
  }
  return value;
}

/** The claim at a dotted path, through the claims' own fields only. */
function claimAt(payload: JWTPayload, path: string): unknown {
  let value: unknown = payload;
  for (const name of path.split('.')) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, name)) {
      return undefined;
    }
    value = (value as Record<string, unknown>)[name];
  }
  return value;
}
