/**
 * The access configuration file (CONFIG_FILE, docs/access.md): named connections, API keys and
 * JWT verification, read once at start-up into a frozen AccessConfig. Every mistake is collected
 * before anything is refused, so one start shows them all, one line each, named by its JSON path.
 * No line shows a secret: a value is echoed only where it cannot be one.
 */
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { RequestError, type ConnectionTarget } from '@sqlgate/core';
import { ConfigError } from '../config';
import { connectionTargetOf } from '../contract/connection-string';
import { TIMER_MAX_MS } from '../timer-limit';

/** `tokens` every `perMs` milliseconds, at most `burst` at once: "50/s" is {50, 1000, 50}. */
export interface RateRule {
  tokens: number;
  perMs: number;
  burst: number;
}

/**
 * What statements a caller may run: `read` (reads only), `write`, `all`, or only the listed
 * queries, by their text (`queries`: text to its id, if it has one) or by id (`byId`).
 */
export type AllowRule =
  | 'read'
  | 'write'
  | 'all'
  | {
      queries: ReadonlyMap<string, string | undefined>;
      byId: ReadonlyMap<string, string>;
    };

export interface AccessRules {
  /** The names of the connections the caller may use. */
  connections: ReadonlySet<string>;
  allow: AllowRule;
  rate?: RateRule;
  concurrency?: number;
  maxRows?: number;
  timeoutMs?: number;
}

export interface ApiKey extends AccessRules {
  id: string;
  role?: string;
  /** sha256 of the secret, 32 bytes: the secret itself is not kept. */
  secretDigest: Uint8Array;
}

export interface JwtRules extends AccessRules {
  /** Where the role is in the claims: a name, or a dotted path (`app_metadata.role`). */
  roleClaim: string;
  defaultRole?: string;
  audience?: string;
  issuer?: string;
  /** The only algorithms a token may be signed with. */
  algorithms: readonly string[];
  key:
    | { kind: 'secret'; secret: Uint8Array }
    | { kind: 'publicKey'; pem: string }
    | { kind: 'jwks'; url: URL };
}

export interface NamedConnection {
  name: string;
  target: ConnectionTarget;
  /** Hot standbys of `target` that its reads may go to (docs/decisions.md 13); absent: none. */
  replicas?: readonly ConnectionTarget[];
  /** With `replicas`: a replica further behind than this is left out (maxReplicaLagMs). */
  maxReplicaLagMs?: number;
}

/** maxReplicaLagMs when a connection with replicas names none. */
export const DEFAULT_MAX_REPLICA_LAG_MS = 1000;

export interface AccessConfig {
  connections: ReadonlyMap<string, NamedConnection>;
  keys: readonly ApiKey[];
  jwt?: JwtRules;
}

type Env = Record<string, string | undefined>;
type ReadFile = (path: string) => string;
type Json = Record<string, unknown>;

const NAME = /^[A-Za-z0-9_.-]{1,63}$/;
const NAME_RULE = 'must be 1 to 63 letters, digits, _ . or -';
/** PostgreSQL's NAMEDATALEN - 1. */
const MAX_ROLE_BYTES = 63;
const MIN_KEY_SECRET_CHARS = 16;
/** RFC 7518 3.2: an HMAC key at least as long as the hash's output. */
const MIN_JWT_SECRET_BYTES = 32;
const RATE = /^([0-9]+)\/(s|min|h)$/;
const PER_MS: Record<string, number> = { s: 1000, min: 60_000, h: 3_600_000 };
const HMAC_ALGORITHMS = ['HS256', 'HS384', 'HS512'];
const RSA_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
const EC_ALGORITHM_OF_CURVE: Record<string, string> = {
  prime256v1: 'ES256',
  secp384r1: 'ES384',
  secp521r1: 'ES512',
};
const EDDSA_ALGORITHMS = ['EdDSA', 'Ed25519'];
const ASYMMETRIC_ALGORITHMS = [
  ...RSA_ALGORITHMS,
  ...Object.values(EC_ALGORITHM_OF_CURVE),
  ...EDDSA_ALGORITHMS,
];
/** Without `algorithms`, a JWKS's keys may be of these kinds. */
const JWKS_DEFAULT_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'];

const TOP_FIELDS = ['connections', 'keys', 'jwt'];
const CONNECTION_FIELDS = ['url', 'replicas', 'maxReplicaLagMs'];
const RULE_FIELDS = ['connections', 'allow', 'rate', 'concurrency', 'maxRows', 'timeoutMs'];
const KEY_FIELDS = ['id', 'secret', 'secretHash', 'role', ...RULE_FIELDS];
const JWT_FIELDS = [
  'secret',
  'jwksUrl',
  'publicKey',
  'algorithms',
  'audience',
  'issuer',
  'roleClaim',
  'defaultRole',
  ...RULE_FIELDS,
];

/** Reads CONFIG_FILE's file; throws ConfigError listing every mistake. */
export function readAccessConfig(path: string, env: Env): AccessConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `CONFIG_FILE must name a readable file, got '${path}' (${(error as Error).message})`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`CONFIG_FILE '${path}' is not JSON: ${(error as Error).message}`);
  }
  return parseAccessConfig(json, env);
}

/** The configuration `json` describes; throws ConfigError listing every mistake. */
export function parseAccessConfig(
  json: unknown,
  env: Env,
  readFile: ReadFile = (path) => readFileSync(path, 'utf8'),
): AccessConfig {
  const reader = new Reader(env, readFile);
  const config = reader.config(json);
  if (reader.mistakes.length > 0) {
    const count = reader.mistakes.length;
    throw new ConfigError(
      `CONFIG_FILE has ${count} mistake${count === 1 ? '' : 's'}:\n${reader.mistakes.map((line) => `  ${line}`).join('\n')}`,
    );
  }
  return config;
}

/** `keys[1].rate`, `connections.app`, or `connections["a b"]` for a name that needs quoting. */
function member(path: string, name: string): string {
  const shown = /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
  return path === '' ? shown.replace(/^\./, '') : `${path}${shown}`;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  return JSON.stringify(value);
}

/** A Map whose mutators throw, so the frozen configuration cannot be changed through it. */
function frozenMap<K, V>(entries: Iterable<readonly [K, V]>): ReadonlyMap<K, V> {
  const map = new Map<K, V>(entries);
  for (const mutator of ['set', 'delete', 'clear']) {
    Object.defineProperty(map, mutator, {
      value: () => {
        throw new TypeError('The access configuration cannot be changed');
      },
    });
  }
  return Object.freeze(map);
}

function frozenSet<T>(values: Iterable<T>): ReadonlySet<T> {
  const set = new Set<T>(values);
  for (const mutator of ['add', 'delete', 'clear']) {
    Object.defineProperty(set, mutator, {
      value: () => {
        throw new TypeError('The access configuration cannot be changed');
      },
    });
  }
  return Object.freeze(set);
}

class Reader {
  readonly mistakes: string[] = [];
  private connectionNames = new Set<string>();

  constructor(
    private readonly env: Env,
    private readonly readFile: ReadFile,
  ) {}

  private mistake(path: string, what: string): void {
    this.mistakes.push(`${path}: ${what}`);
  }

  config(json: unknown): AccessConfig {
    if (!isObject(json)) {
      this.mistakes.push(`the file must hold a JSON object, not ${describe(json)}`);
      return Object.freeze({ connections: frozenMap<string, NamedConnection>([]), keys: [] });
    }
    this.refuseUnknown(json, '', TOP_FIELDS);
    const connections = this.connections(json.connections);
    const keys = this.keys(json.keys);
    const config: AccessConfig = { connections, keys };
    if (json.jwt !== undefined) {
      const jwt = this.jwt(json.jwt);
      if (jwt !== undefined) config.jwt = jwt;
    }
    const noKeys = json.keys === undefined || (Array.isArray(json.keys) && json.keys.length === 0);
    if (noKeys && json.jwt === undefined && isObject(json.connections)) {
      this.mistakes.push('the file has no keys and no jwt: nobody could use its connections');
    }
    return Object.freeze(config);
  }

  private refuseUnknown(object: Json, path: string, known: readonly string[]): void {
    for (const field of Object.keys(object)) {
      if (!known.includes(field)) {
        this.mistake(member(path, field), `is not a known field; known here: ${known.join(', ')}`);
      }
    }
  }

  private connections(value: unknown): ReadonlyMap<string, NamedConnection> {
    const path = 'connections';
    if (value === undefined) {
      this.mistake(
        path,
        'is missing: name at least one connection, {"name": {"url": "postgresql://…"}}',
      );
      return frozenMap([]);
    }
    if (!isObject(value) || Object.keys(value).length === 0) {
      this.mistake(path, 'must be an object naming at least one connection, {"name": {"url": …}}');
      return frozenMap([]);
    }
    const named: [string, NamedConnection][] = [];
    for (const [name, entry] of Object.entries(value)) {
      const entryPath = member(path, name);
      // A name is known even when its entry is wrong, so that rules naming it add no second line.
      this.connectionNames.add(name);
      if (!NAME.test(name))
        this.mistake(entryPath, `is not a valid connection name: it ${NAME_RULE}`);
      if (!isObject(entry)) {
        this.mistake(
          entryPath,
          `must be an object {"url": "postgresql://…"}, not ${describe(entry)}`,
        );
        continue;
      }
      this.refuseUnknown(entry, entryPath, CONNECTION_FIELDS);
      const urlPath = `${entryPath}.url`;
      if (entry.url === undefined) {
        this.mistake(urlPath, 'is missing');
        continue;
      }
      const url = this.secret(entry.url, urlPath);
      if (url === undefined) continue;
      const target = this.target(url, urlPath);
      const replicas = this.replicas(entry.replicas, `${entryPath}.replicas`);
      const maxReplicaLagMs = this.maxReplicaLagMs(entry.maxReplicaLagMs, entryPath);
      if (target !== undefined && replicas !== undefined) {
        // A connection without replicas keeps its shape.
        const standbys = entry.replicas === undefined ? {} : { replicas, maxReplicaLagMs };
        named.push([name, Object.freeze({ name, target: Object.freeze(target), ...standbys })]);
      }
    }
    return frozenMap(named);
  }

  /** A connection's replicas: URLs (or secrets holding one), as `url` is read. */
  private replicas(value: unknown, path: string): readonly ConnectionTarget[] | undefined {
    if (value === undefined) return Object.freeze([]);
    if (!Array.isArray(value)) {
      this.mistake(path, `must be a list of connection URLs, not ${describe(value)}`);
      return undefined;
    }
    const targets: ConnectionTarget[] = [];
    let mistaken = false;
    for (const [index, entry] of value.entries()) {
      const entryPath = `${path}[${index}]`;
      const url = this.secret(entry, entryPath);
      const target = url === undefined ? undefined : this.target(url, entryPath);
      if (target === undefined) mistaken = true;
      else targets.push(Object.freeze(target));
    }
    return mistaken ? undefined : Object.freeze(targets);
  }

  private maxReplicaLagMs(value: unknown, entryPath: string): number {
    if (value === undefined) return DEFAULT_MAX_REPLICA_LAG_MS;
    if (!isPositiveInteger(value) || value > TIMER_MAX_MS) {
      this.mistake(
        `${entryPath}.maxReplicaLagMs`,
        `must be a whole number of milliseconds from 1 to ${TIMER_MAX_MS}, not ${describe(value)}`,
      );
      return DEFAULT_MAX_REPLICA_LAG_MS;
    }
    return value;
  }

  /** The target `url` names, read as the Neon-Connection-String header is (docs/interface.md). */
  private target(url: string, path: string): ConnectionTarget | undefined {
    try {
      return connectionTargetOf(url);
    } catch (error) {
      if (!(error instanceof RequestError)) throw error;
      // The parser's sentences speak of the header; here the URI is in the file.
      this.mistake(path, error.message.replace(/^The Neon-Connection-String header /, 'the URI '));
      return undefined;
    }
  }

  /**
   * A secret given in place, or as {"env": "VAR"} or {"file": "/path"} (its contents, trailing
   * newlines removed). Undefined after a mistake.
   */
  private secret(value: unknown, path: string): string | undefined {
    if (typeof value === 'string') return value;
    if (!isObject(value)) {
      this.mistake(
        path,
        `must be a string, {"env": "VAR"} or {"file": "/path"}, not ${describe(value)}`,
      );
      return undefined;
    }
    const sources = Object.keys(value);
    if (sources.length !== 1 || (sources[0] !== 'env' && sources[0] !== 'file')) {
      this.mistake(path, 'must be a string, or an object with exactly one field: env or file');
      return undefined;
    }
    const source = sources[0];
    const name = value[source];
    const sourcePath = `${path}.${source}`;
    if (typeof name !== 'string' || name === '') {
      this.mistake(
        sourcePath,
        `must be a non-empty string naming ${source === 'env' ? 'a variable' : 'a file'}`,
      );
      return undefined;
    }
    if (source === 'env') {
      const found = this.env[name];
      if (found === undefined || found === '') {
        this.mistake(sourcePath, `the variable ${name} is not set (or is empty)`);
        return undefined;
      }
      return found;
    }
    try {
      return this.readFile(name).replace(/(\r?\n)+$/, '');
    } catch (error) {
      this.mistake(
        sourcePath,
        `cannot read '${name}' (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      );
      return undefined;
    }
  }

  private keys(value: unknown): readonly ApiKey[] {
    if (value === undefined) return Object.freeze([]);
    if (!Array.isArray(value)) {
      this.mistake('keys', `must be a list of keys, not ${describe(value)}`);
      return Object.freeze([]);
    }
    const keys: ApiKey[] = [];
    const pathOfId = new Map<string, string>();
    const pathOfDigest = new Map<string, string>();
    value.forEach((entry, index) => {
      const path = `keys[${index}]`;
      if (!isObject(entry)) {
        this.mistake(
          path,
          `must be an object {"id": …, "secret": …, "connections": […]}, not ${describe(entry)}`,
        );
        return;
      }
      this.refuseUnknown(entry, path, KEY_FIELDS);
      const id = this.keyId(entry.id, `${path}.id`, pathOfId);
      const digest = this.keyDigest(entry, path);
      if (digest !== undefined) {
        const hex = Buffer.from(digest).toString('hex');
        const same = pathOfDigest.get(hex);
        // One secret for two keys would make the key presented ambiguous.
        if (same !== undefined) this.mistake(path, `has the same secret as ${same}`);
        else pathOfDigest.set(hex, path);
      }
      const role = entry.role === undefined ? undefined : this.role(entry.role, `${path}.role`);
      const rules = this.rules(entry, path);
      if (id === undefined || digest === undefined || rules === undefined) return;
      const key: ApiKey = { id, secretDigest: digest, ...rules };
      if (role !== undefined) key.role = role;
      keys.push(Object.freeze(key));
    });
    return Object.freeze(keys);
  }

  private keyId(value: unknown, path: string, pathOfId: Map<string, string>): string | undefined {
    if (value === undefined) {
      this.mistake(path, 'is missing');
      return undefined;
    }
    if (typeof value !== 'string' || !NAME.test(value)) {
      this.mistake(path, `is not a valid key id: it ${NAME_RULE}`);
      return undefined;
    }
    const same = pathOfId.get(value);
    if (same !== undefined) {
      this.mistake(path, `'${value}' is also the id of ${same}: ids must be unique`);
      return undefined;
    }
    pathOfId.set(value, path.replace(/\.id$/, ''));
    return value;
  }

  /** sha256 of the key's secret, from `secret` or `secretHash`, exactly one of them. */
  private keyDigest(entry: Json, path: string): Uint8Array | undefined {
    const hasSecret = entry.secret !== undefined;
    const hasHash = entry.secretHash !== undefined;
    if (hasSecret === hasHash) {
      this.mistake(
        path,
        'must have exactly one of secret and secretHash ("sha256:<64 hex digits>")',
      );
      return undefined;
    }
    if (hasHash) {
      const hash = entry.secretHash;
      const found = typeof hash === 'string' ? /^sha256:([0-9a-fA-F]{64})$/.exec(hash) : null;
      if (found === null) {
        this.mistake(
          `${path}.secretHash`,
          'must be "sha256:" followed by 64 hex digits (the sha256 of the secret)',
        );
        return undefined;
      }
      return new Uint8Array(Buffer.from(found[1]!, 'hex'));
    }
    const secretPath = `${path}.secret`;
    const secret = this.secret(entry.secret, secretPath);
    if (secret === undefined) return undefined;
    if (secret.length < MIN_KEY_SECRET_CHARS) {
      this.mistake(
        secretPath,
        `is too short: a key's secret must be at least ${MIN_KEY_SECRET_CHARS} characters`,
      );
      return undefined;
    }
    if (!/^[\x21-\x7e]+$/.test(secret)) {
      // It is sent as `Authorization: Bearer <secret>`, one token.
      this.mistake(
        secretPath,
        'must be printable ASCII without spaces: it is sent in an Authorization header',
      );
      return undefined;
    }
    return new Uint8Array(createHash('sha256').update(secret).digest());
  }

  private role(value: unknown, path: string): string | undefined {
    if (typeof value !== 'string' || value === '' || value.includes('\0')) {
      this.mistake(path, 'must be a non-empty role name');
      return undefined;
    }
    if (Buffer.byteLength(value, 'utf8') > MAX_ROLE_BYTES) {
      this.mistake(path, `is longer than PostgreSQL's ${MAX_ROLE_BYTES} bytes for a role name`);
      return undefined;
    }
    return value;
  }

  /** The rules keys and the jwt share; undefined when a required one is wrong. */
  private rules(entry: Json, path: string): AccessRules | undefined {
    const connections = this.ruleConnections(entry.connections, `${path}.connections`);
    const allow = entry.allow === undefined ? 'all' : this.allow(entry.allow, `${path}.allow`);
    const rate = entry.rate === undefined ? undefined : this.rate(entry.rate, `${path}.rate`);
    const rules: AccessRules = { connections: connections ?? frozenSet([]), allow: allow ?? 'all' };
    if (rate !== undefined) rules.rate = Object.freeze(rate);
    const concurrency = this.positive(entry, 'concurrency', path);
    if (concurrency !== undefined) rules.concurrency = concurrency;
    const maxRows = this.positive(entry, 'maxRows', path);
    if (maxRows !== undefined) rules.maxRows = maxRows;
    const timeoutMs = this.positive(entry, 'timeoutMs', path, TIMER_MAX_MS);
    if (timeoutMs !== undefined) rules.timeoutMs = timeoutMs;
    return connections === undefined || allow === undefined ? undefined : rules;
  }

  private ruleConnections(value: unknown, path: string): ReadonlySet<string> | undefined {
    if (!Array.isArray(value) || value.length === 0) {
      this.mistake(
        path,
        `must list at least one connection's name, not ${value === undefined ? 'be missing' : describe(value)}`,
      );
      return undefined;
    }
    let wrong = false;
    value.forEach((name, index) => {
      if (typeof name !== 'string') {
        this.mistake(`${path}[${index}]`, `must be a connection's name, not ${describe(name)}`);
        wrong = true;
      } else if (!this.connectionNames.has(name)) {
        this.mistake(`${path}[${index}]`, `'${name}' is not one of the connections`);
        wrong = true;
      }
    });
    return wrong ? undefined : frozenSet(value as string[]);
  }

  private allow(value: unknown, path: string): AllowRule | undefined {
    if (value === 'read' || value === 'write' || value === 'all') return value;
    if (!isObject(value)) {
      this.mistake(
        path,
        `must be "read", "write", "all" or {"queries": [...]}, not ${typeof value === 'string' ? `'${value}'` : describe(value)}`,
      );
      return undefined;
    }
    this.refuseUnknown(value, path, ['queries']);
    const listPath = `${path}.queries`;
    const list = value.queries;
    if (!Array.isArray(list) || list.length === 0) {
      this.mistake(
        listPath,
        'must list at least one query: "SELECT …" or {"id": "name", "sql": "SELECT …"}',
      );
      return undefined;
    }
    const queries = new Map<string, string | undefined>();
    const byId = new Map<string, string>();
    const pathOfSql = new Map<string, string>();
    const pathOfId = new Map<string, string>();
    let wrong = false;
    list.forEach((query, index) => {
      const queryPath = `${listPath}[${index}]`;
      const read = this.query(query, queryPath);
      if (read === undefined) {
        wrong = true;
        return;
      }
      const sameSql = pathOfSql.get(read.sql);
      if (sameSql !== undefined) {
        this.mistake(queryPath, `has the same SQL as ${sameSql}`);
        wrong = true;
        return;
      }
      pathOfSql.set(read.sql, queryPath);
      if (read.id !== undefined) {
        const sameId = pathOfId.get(read.id);
        if (sameId !== undefined) {
          this.mistake(
            `${queryPath}.id`,
            `'${read.id}' is also the id of ${sameId}: ids must be unique`,
          );
          wrong = true;
          return;
        }
        pathOfId.set(read.id, queryPath);
        byId.set(read.id, read.sql);
      }
      queries.set(read.sql, read.id);
    });
    return wrong
      ? undefined
      : Object.freeze({ queries: frozenMap(queries), byId: frozenMap(byId) });
  }

  private query(value: unknown, path: string): { sql: string; id?: string } | undefined {
    if (typeof value === 'string') {
      if (value.trim() !== '') return { sql: value };
      this.mistake(path, 'must be a non-empty SQL text');
      return undefined;
    }
    if (!isObject(value)) {
      this.mistake(
        path,
        `must be SQL text or {"id": "name", "sql": "SELECT …"}, not ${describe(value)}`,
      );
      return undefined;
    }
    this.refuseUnknown(value, path, ['id', 'sql']);
    let ok = true;
    if (typeof value.sql !== 'string' || value.sql.trim() === '') {
      this.mistake(`${path}.sql`, 'must be a non-empty SQL text');
      ok = false;
    }
    if (typeof value.id !== 'string' || !NAME.test(value.id)) {
      this.mistake(`${path}.id`, `is not a valid query id: it ${NAME_RULE}`);
      ok = false;
    }
    return ok ? { sql: value.sql as string, id: value.id as string } : undefined;
  }

  private rate(value: unknown, path: string): RateRule | undefined {
    if (isObject(value)) {
      this.refuseUnknown(value, path, ['rate', 'burst']);
      const rate = this.rateText(value.rate, `${path}.rate`);
      if (value.burst === undefined) return rate;
      if (!isPositiveInteger(value.burst)) {
        this.mistake(
          `${path}.burst`,
          `must be an integer of at least 1, not ${describe(value.burst)}`,
        );
        return undefined;
      }
      return rate === undefined ? undefined : { ...rate, burst: value.burst };
    }
    return this.rateText(value, path);
  }

  private rateText(value: unknown, path: string): RateRule | undefined {
    const found = typeof value === 'string' ? RATE.exec(value) : null;
    const tokens = found === null ? NaN : Number(found[1]);
    if (found === null || !Number.isSafeInteger(tokens) || tokens < 1) {
      const shown = typeof value === 'string' ? `'${value}'` : describe(value);
      this.mistake(
        path,
        `${shown} is not a rate like "50/s" or "600/min" (N/s, N/min or N/h, N at least 1)`,
      );
      return undefined;
    }
    return { tokens, perMs: PER_MS[found[2]!]!, burst: tokens };
  }

  private positive(
    entry: Json,
    field: string,
    path: string,
    max = Number.MAX_SAFE_INTEGER,
  ): number | undefined {
    const value = entry[field];
    if (value === undefined) return undefined;
    if (!isPositiveInteger(value) || value > max) {
      this.mistake(
        member(path, field),
        `must be an integer from 1 to ${max}, not ${describe(value)}`,
      );
      return undefined;
    }
    return value;
  }

  private jwt(value: unknown): JwtRules | undefined {
    const path = 'jwt';
    if (!isObject(value)) {
      this.mistake(path, `must be an object, not ${describe(value)}`);
      return undefined;
    }
    this.refuseUnknown(value, path, JWT_FIELDS);
    const key = this.jwtKey(value, path);
    const algorithms =
      key === undefined ? undefined : this.algorithms(value.algorithms, key, `${path}.algorithms`);
    const roleClaim = this.roleClaim(value.roleClaim, `${path}.roleClaim`);
    const defaultRole =
      value.defaultRole === undefined
        ? undefined
        : this.role(value.defaultRole, `${path}.defaultRole`);
    const audience = this.optionalText(value, 'audience', path);
    const issuer = this.optionalText(value, 'issuer', path);
    const rules = this.rules(value, path);
    if (
      key === undefined ||
      algorithms === undefined ||
      roleClaim === undefined ||
      rules === undefined
    )
      return undefined;
    if (value.defaultRole !== undefined && defaultRole === undefined) return undefined;
    const jwt: JwtRules = {
      ...rules,
      roleClaim,
      algorithms: Object.freeze(algorithms),
      key: Object.freeze(key.key),
    };
    if (defaultRole !== undefined) jwt.defaultRole = defaultRole;
    if (audience !== undefined) jwt.audience = audience;
    if (issuer !== undefined) jwt.issuer = issuer;
    return Object.freeze(jwt);
  }

  /** The verification key, with the public key's node object to tell its kind by. */
  private jwtKey(
    value: Json,
    path: string,
  ): { key: JwtRules['key']; publicKey?: KeyObject } | undefined {
    const given = ['secret', 'jwksUrl', 'publicKey'].filter((field) => value[field] !== undefined);
    if (given.length !== 1) {
      this.mistake(
        path,
        `must have exactly one of secret, jwksUrl and publicKey${given.length > 1 ? `, not ${given.join(' and ')}` : ''}`,
      );
      return undefined;
    }
    if (given[0] === 'secret') {
      const secret = this.secret(value.secret, `${path}.secret`);
      if (secret === undefined) return undefined;
      const bytes = Buffer.from(secret, 'utf8');
      if (bytes.length < MIN_JWT_SECRET_BYTES) {
        this.mistake(
          `${path}.secret`,
          `is too short: an HMAC secret must be at least ${MIN_JWT_SECRET_BYTES} bytes (RFC 7518 3.2)`,
        );
        return undefined;
      }
      return { key: { kind: 'secret', secret: new Uint8Array(bytes) } };
    }
    if (given[0] === 'publicKey') {
      const pem = this.secret(value.publicKey, `${path}.publicKey`);
      if (pem === undefined) return undefined;
      if (/PRIVATE KEY/.test(pem)) {
        this.mistake(
          `${path}.publicKey`,
          'holds a private key: give the public key (-----BEGIN PUBLIC KEY-----)',
        );
        return undefined;
      }
      try {
        const publicKey = createPublicKey(pem);
        return { key: { kind: 'publicKey', pem }, publicKey };
      } catch {
        this.mistake(`${path}.publicKey`, 'is not a PEM public key (-----BEGIN PUBLIC KEY-----)');
        return undefined;
      }
    }
    return this.jwksUrl(value.jwksUrl, `${path}.jwksUrl`);
  }

  private jwksUrl(value: unknown, path: string): { key: JwtRules['key'] } | undefined {
    let url: URL | undefined;
    try {
      url = typeof value === 'string' ? new URL(value) : undefined;
    } catch {
      url = undefined;
    }
    if (url === undefined) {
      this.mistake(path, 'must be an https:// URL');
      return undefined;
    }
    // Keys fetched in the clear could be replaced on the way; only loopback may be plain http.
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const loopback =
      host === 'localhost' || (isIP(host) !== 0 && (host === '::1' || host.startsWith('127.')));
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
      this.mistake(path, 'must be an https:// URL (http:// only to localhost)');
      return undefined;
    }
    return { key: { kind: 'jwks', url } };
  }

  /** The pinned algorithms: those given, each fitting the key, or the key kind's default. */
  private algorithms(
    value: unknown,
    key: { key: JwtRules['key']; publicKey?: KeyObject },
    path: string,
  ): string[] | undefined {
    const fitting = fittingAlgorithms(key);
    if (fitting.length === 0) {
      this.mistake(
        path.replace(/\.algorithms$/, '.publicKey'),
        `is a ${key.publicKey?.asymmetricKeyType ?? 'unknown'} key; sqlgate takes RSA, EC (P-256, P-384, P-521) and Ed25519 keys`,
      );
      return undefined;
    }
    if (value === undefined) return defaultAlgorithms(key, fitting);
    if (
      !Array.isArray(value) ||
      value.length === 0 ||
      value.some((entry) => typeof entry !== 'string')
    ) {
      this.mistake(path, 'must be a non-empty list of algorithm names, like ["RS256"]');
      return undefined;
    }
    const unfit = (value as string[]).filter((algorithm) => !fitting.includes(algorithm));
    if (unfit.length > 0) {
      const shown = unfit.map((algorithm) => `'${algorithm}'`).join(', ');
      this.mistake(
        path,
        `${shown} cannot be used with this ${KIND_NAME[key.key.kind]}; it takes ${fitting.join(', ')}`,
      );
      return undefined;
    }
    return [...new Set(value as string[])];
  }

  private roleClaim(value: unknown, path: string): string | undefined {
    if (value === undefined) return 'role';
    if (typeof value !== 'string' || !/^[^.]+(\.[^.]+)*$/.test(value)) {
      this.mistake(path, 'must be a claim name, or a dotted path like "app_metadata.role"');
      return undefined;
    }
    return value;
  }

  private optionalText(entry: Json, field: string, path: string): string | undefined {
    const value = entry[field];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value === '') {
      this.mistake(member(path, field), `must be a non-empty string, not ${describe(value)}`);
      return undefined;
    }
    return value;
  }
}

const KIND_NAME: Record<JwtRules['key']['kind'], string> = {
  secret: 'secret',
  publicKey: 'public key',
  jwks: 'JWKS',
};

/**
 * The algorithms a key may verify: a secret only HMAC, a public key only its own kind's, so that a
 * key is never used in a way it was not made for (an HS256 token "signed" with a public key).
 */
function fittingAlgorithms(key: { key: JwtRules['key']; publicKey?: KeyObject }): string[] {
  if (key.key.kind === 'secret') return HMAC_ALGORITHMS;
  if (key.key.kind === 'jwks') return ASYMMETRIC_ALGORITHMS;
  const publicKey = key.publicKey!;
  switch (publicKey.asymmetricKeyType) {
    case 'rsa':
      return RSA_ALGORITHMS;
    case 'rsa-pss':
      return RSA_ALGORITHMS.filter((algorithm) => algorithm.startsWith('PS'));
    case 'ec': {
      const curve = publicKey.asymmetricKeyDetails?.namedCurve;
      const algorithm = curve === undefined ? undefined : EC_ALGORITHM_OF_CURVE[curve];
      return algorithm === undefined ? [] : [algorithm];
    }
    case 'ed25519':
      return EDDSA_ALGORITHMS;
    default:
      return [];
  }
}

/** Without `algorithms`: HS256 for a secret; RS256, ES256 or EdDSA by the public key's kind. */
function defaultAlgorithms(
  key: { key: JwtRules['key']; publicKey?: KeyObject },
  fitting: string[],
): string[] {
  if (key.key.kind === 'jwks') return JWKS_DEFAULT_ALGORITHMS;
  return fitting.slice(0, 1);
}
