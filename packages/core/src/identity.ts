/**
 * A request that runs as a role (docs/decisions.md 12): which statements it may hold, and the
 * settings that make its transaction, or its session, run as that role with its claims.
 */
import { codedError, DatabaseError, ErrorCodes, RequestError } from './errors';
import { createsTable } from './parser/creates-table';
import { roleChangeIn } from './parser/role-guard';
import type { ParsedStatement } from './parser/types';
import type { CacheScope, Connection } from './ports/connections';
import type { PortFailure } from './ports/settled';
import { UNLIMITED_ROWS, type QueryOptions, type RequestIdentity } from './request';
import { StatementContext } from './parser/statement-context';
import { fieldsOf } from './parser/tree';

/** What `may: 'write'` runs besides reads: statements that read or change rows, never DDL. */
const DATA_STATEMENTS = new Set([
  'SELECT',
  'WITH',
  'VALUES',
  'TABLE',
  'INSERT',
  'UPDATE',
  'DELETE',
  'MERGE',
  'COPY',
  'EXPLAIN',
]);

/** Longest role name PostgreSQL keeps (NAMEDATALEN - 1 bytes). */
const MAX_ROLE_BYTES = 63;

/**
 * Refuses, before anything runs, a statement the identity may not run or one that could leave its
 * role (parser/role-guard.ts): FORBIDDEN, naming the statement.
 */
export function refuseBeyondIdentity(
  statements: readonly ParsedStatement[],
  identity: RequestIdentity,
): void {
  for (const statement of statements) {
    const why = refusalOf(statement, identity);
    if (why !== undefined) {
      throw new RequestError(ErrorCodes.FORBIDDEN, `Statement ${statement.index}: ${why}`, {
        code: ErrorCodes.FORBIDDEN,
        statementIndex: statement.index,
      });
    }
  }
}

function refusalOf(statement: ParsedStatement, identity: RequestIdentity): string | undefined {
  const { keyword } = statement;
  if (identity.may === 'read' && !isRead(statement)) {
    return `these credentials may only read, and ${keyword} is not a read`;
  }
  if (identity.may === 'write' && !isRead(statement) && !changesRowsOnly(statement)) {
    return `these credentials may read and change rows, and ${keyword} does more`;
  }
  const change = roleChangeIn(statement);
  if (change !== undefined) return `${change} could leave the role these credentials run as`;
  return readsEarlierSession(statement);
}

/**
 * currval() and lastval() read what an earlier request left on the connection, which may be
 * another caller's on a pool credentials share (docs/decisions.md 12): RETURNING tells a request
 * its own values.
 */
function readsEarlierSession(statement: ParsedStatement): string | undefined {
  const context = new StatementContext(statement.text);
  for (let i = 0; i < context.length; i++) {
    const name = context.identifierName(i)?.toLowerCase();
    if (name === 'currval' || name === 'lastval') {
      return `${name}() reads what an earlier request left on a shared connection; use RETURNING`;
    }
  }
  return undefined;
}

/**
 * A read, or a session's transaction control that does not ask for READ WRITE (a reads-only
 * session's transactions default to READ ONLY).
 */
function isRead(statement: ParsedStatement): boolean {
  const { statementClass, text } = statement;
  if (statementClass === 'read') return true;
  return statementClass === 'transaction-control' && !/\bwrite\b/i.test(text);
}

function changesRowsOnly(statement: ParsedStatement): boolean {
  const { statementClass, keyword } = statement;
  if (statementClass === 'transaction-control') return true;
  return (
    statementClass === 'write' &&
    DATA_STATEMENTS.has(keyword) &&
    !createsTable(statement) &&
    !copiesOnServer(statement)
  );
}

/**
 * `COPY ... TO` or `FROM` a server file or a program: it reads or writes the server's files or
 * runs a command there (what the role may), not only rows. STDIN and STDOUT change rows only.
 */
function copiesOnServer(statement: ParsedStatement): boolean {
  if (statement.keyword !== 'COPY') return false;
  const tree = new StatementContext(statement.text).syntaxTree();
  const copy = tree === null ? null : fieldsOf(tree, 'CopyStmt');
  // Unreadable: its reach is unknown.
  return copy === null || typeof copy['filename'] === 'string';
}

/**
 * The identity's maxRows and timeoutMs: a request's defaults, and the most it may ask for; more is
 * refused, never silently lowered. A request asking for no row limit (UNLIMITED_ROWS) gets the
 * identity's.
 */
export function capToIdentity(options: QueryOptions, identity: RequestIdentity): void {
  for (const name of ['maxRows', 'timeoutMs'] as const) {
    const cap = identity[name];
    if (cap === undefined) continue;
    const asked = options[name];
    if (asked === undefined || (name === 'maxRows' && asked === UNLIMITED_ROWS)) {
      options[name] = cap;
    } else if (asked > cap) {
      throw codedError(ErrorCodes.FORBIDDEN, `'${name}' is at most ${cap} for these credentials`);
    }
  }
}

/** A role name PostgreSQL can hold; FORBIDDEN otherwise (a JWT's claim may be anything). */
export function refuseUnusableRole(identity: RequestIdentity): void {
  const { role } = identity;
  if (role === undefined) return;
  if (
    role === '' ||
    role.includes('\0') ||
    new TextEncoder().encode(role).length > MAX_ROLE_BYTES
  ) {
    throw codedError(ErrorCodes.FORBIDDEN, 'The credentials name a role PostgreSQL cannot hold');
  }
}

/** `"name"`, as PostgreSQL reads a quoted identifier. */
function quotedIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** `E'...'`: the same string whatever standard_conforming_strings says. */
function escapedLiteral(text: string): string {
  return `E'${text.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/**
 * The statements that make what follows run as `identity`: for the transaction sqlgate opens
 * (`SET LOCAL`, gone at its end), or for a session from its start (`SET`, gone when the
 * connection is cleaned; reads-only sessions also default to READ ONLY transactions).
 */
export function identitySetup(
  identity: RequestIdentity,
  scope: 'transaction' | 'session',
): string[] {
  const set = scope === 'transaction' ? 'SET LOCAL' : 'SET';
  const setup: string[] = [];
  if (identity.role !== undefined) setup.push(`${set} ROLE ${quotedIdentifier(identity.role)}`);
  if (identity.claims !== undefined) {
    setup.push(`${set} request.jwt.claims = ${escapedLiteral(identity.claims)}`);
  }
  if (scope === 'session' && identity.may === 'read') {
    setup.push('SET default_transaction_read_only = on');
  }
  return setup;
}

/** SQLSTATEs of a role the login may not take or that does not exist, and of a bad setting. */
const ROLE_REFUSED = new Set(['42501', '22023', '42704']);

/**
 * A failure of the identity's setup as the caller should see it: a role the connection's login
 * cannot take is the credentials' fault, FORBIDDEN (docs/decisions.md 12), not a statement's.
 */
export function identitySetupFailure(error: PortFailure): PortFailure {
  if (!(error instanceof DatabaseError) || !ROLE_REFUSED.has(error.sqlState)) return error;
  return codedError(
    ErrorCodes.FORBIDDEN,
    `The connection's login cannot run as the credentials' role: ${error.message}`,
  );
}

/** Sets a session's connection to run as `identity`; why it could not, if it could not. */
export async function runAsIdentity(
  connection: Connection,
  identity: RequestIdentity,
): Promise<PortFailure | undefined> {
  const setup = identitySetup(identity, 'session');
  if (setup.length === 0) return undefined;
  const { error } = await connection.runBatch(setup, { rowMode: 'array', maxRows: 0 });
  return error && identitySetupFailure(error);
}

/**
 * The cache scope of a request run as `identity`: what one role read with one set of claims is
 * served only to that role with those claims (docs/decisions.md 12).
 */
export function scopeAsIdentity(scope: CacheScope, identity: RequestIdentity): CacheScope {
  const { role = null, claims = null } = identity;
  return {
    ...scope,
    credentials: JSON.stringify([scope.credentials, role, claims]),
    shared: true,
  };
}
