/**
 * The service reads a request's SQL with its target's standard_conforming_strings
 * (decisions 10.11), learning the setting from one connection only when the text needs it.
 * A fake provider stands in for PostgreSQL: this is the core's side of the port.
 */
import { createParseMemo, loadParser, UnterminatedTextError } from '../../src/parser';
import { orThrow, type Settled } from '../../src/ports/settled';
import type {
  Connection,
  ConnectionProvider,
  ConnectionTarget,
  ServerSettings,
} from '../../src/ports/connections';
import { statementsForTarget } from '../../src/statements-for-target';

beforeAll(() => loadParser());

const target: ConnectionTarget = {
  host: 'db.example',
  port: 5432,
  user: 'app',
  database: 'legacy',
  sslMode: 'disable',
};

/** A provider whose server reports `reported` on the first connection, counting what it does. */
function fakeProvider(reported: ServerSettings | undefined) {
  let settings: ServerSettings | undefined;
  const calls = { acquired: 0, released: 0 };
  const connection = {
    release: () => {
      calls.released++;
    },
  } as unknown as Connection;
  const provider = {
    acquire: async () => {
      calls.acquired++;
      settings = reported;
      return { ok: true, value: connection };
    },
    serverSettings: () => settings,
  } as unknown as ConnectionProvider;
  return { provider, calls };
}

/** The statements' texts; the split must have succeeded. */
const sqlOf = (split: Settled<readonly { sql: string }[]>) => {
  if (!split.ok) throw split.error;
  return split.value.map((s) => s.sql);
};
const splitByBackslash = "SELECT 'x\\'  ; SELECT 1 --'";

describe('statementsForTarget', () => {
  it('connects to nothing for a text without a backslash in a plain string', async () => {
    const { provider, calls } = fakeProvider({ standardConformingStrings: false });
    const statements = await statementsForTarget("SELECT E'a\\'b'; SELECT 2", target, {
      parse: createParseMemo(),
      connections: provider,
    });
    expect(sqlOf(statements)).toEqual(["SELECT E'a\\'b'", 'SELECT 2']);
    expect(calls).toEqual({ acquired: 0, released: 0 });
  });

  it('learns the setting from one connection, given back unused, when the text depends on it', async () => {
    const { provider, calls } = fakeProvider({ standardConformingStrings: false });
    const statements = await statementsForTarget(splitByBackslash, target, {
      parse: createParseMemo(),
      connections: provider,
    });
    expect(sqlOf(statements)).toEqual([splitByBackslash]);
    expect(calls).toEqual({ acquired: 1, released: 1 });

    // Known from now on: no further connection.
    await statementsForTarget(splitByBackslash, target, {
      parse: createParseMemo(),
      connections: provider,
    });
    expect(calls.acquired).toBe(1);
  });

  it('keeps the default split when the server has the setting on', async () => {
    const { provider } = fakeProvider({ standardConformingStrings: true });
    const statements = await statementsForTarget(splitByBackslash, target, {
      parse: createParseMemo(),
      connections: provider,
    });
    expect(sqlOf(statements)).toEqual(["SELECT 'x\\'", 'SELECT 1']);
  });

  it('a text complete only with the setting off is run when the server has it off', async () => {
    const { provider, calls } = fakeProvider({ standardConformingStrings: false });
    const statements = await statementsForTarget("SELECT 'a\\''", target, {
      parse: createParseMemo(),
      connections: provider,
    });
    expect(sqlOf(statements)).toEqual(["SELECT 'a\\''"]);
    expect(calls.acquired).toBe(1);
  });

  it('refuses an unterminated text before connecting when no backslash could complete it', async () => {
    const { provider, calls } = fakeProvider({ standardConformingStrings: false });
    // Thrown at once: nothing is awaited when no connection is needed.
    expect(() =>
      statementsForTarget('SELECT 1 /* open', target, {
        parse: createParseMemo(),
        connections: provider,
      }),
    ).toThrow(UnterminatedTextError);
    expect(calls.acquired).toBe(0);
  });

  it('refuses after learning the setting when the text is incomplete with it too', async () => {
    const { provider } = fakeProvider({ standardConformingStrings: true });
    await expect(
      statementsForTarget("SELECT 'a\\''", target, {
        parse: createParseMemo(),
        connections: provider,
      }),
    ).rejects.toThrow('Unterminated string starting at line 1, column 8');
  });

  it('uses the setting it already knows without asking again', async () => {
    const { provider, calls } = fakeProvider({ standardConformingStrings: false });
    await orThrow(provider.acquire(target));
    const statements = await statementsForTarget(splitByBackslash, target, {
      parse: createParseMemo(),
      connections: provider,
    });
    expect(sqlOf(statements)).toEqual([splitByBackslash]);
    expect(calls.acquired).toBe(1);
  });

  it("reads every target with PostgreSQL's default when the provider cannot tell", async () => {
    const { provider } = fakeProvider(undefined);
    const withoutSettings = { ...provider, serverSettings: undefined } as ConnectionProvider;
    const statements = await statementsForTarget(splitByBackslash, target, {
      parse: createParseMemo(),
      connections: withoutSettings,
    });
    expect(sqlOf(statements)).toEqual(["SELECT 'x\\'", 'SELECT 1']);
  });
});
