/**
 * The request schemas are the one validator of the request bodies (docs/decisions.md 10.52): every
 * body gets a typed request or a RequestError, a body the schema describes is read, and a body
 * read is one the schema describes once the documented leniencies are applied (null is absent, an
 * empty sslMode is the default, an isolation level in any case, a port's digits with leading
 * zeros). Fields outside the schema are named, not refused.
 */
import Ajv2020 from 'ajv/dist/2020';
import fc from 'fast-check';
import { ErrorCodes, RequestError } from '@sqlgate/core';
import { Type, type TObject } from '@sinclair/typebox';
import {
  CancelRequestSchema,
  ConnectionTestRequestSchema,
  OneOf,
  QueryRequestSchema,
  readCancelBody,
  readConnectionCheckBody,
  readQueryBody,
  readSessionOpenBody,
  readSessionQueryBody,
  requestOrRefusal,
  SessionOpenRequestSchema,
  SessionQueryRequestSchema,
  StringEnum,
  suggestField,
} from '../src/contract';
import { compileShape } from '../src/contract/body-shape';

/** A schema as the OpenAPI document shows it, compiled by another validator than sqlgate's. */
const documented = (schema: TObject) =>
  new Ajv2020({ strict: false }).compile(JSON.parse(JSON.stringify(schema)) as object);

const minimal = {
  host: 'db.example',
  port: 5432,
  user: 'app',
  database: 'app',
  sql: 'SELECT 1',
};

describe('unknown fields', () => {
  it('are named with the field meant, by case or by a near spelling', () => {
    expect(readQueryBody({ ...minimal, maxrows: 5 }).warnings).toEqual([
      "unknown field 'maxrows' (did you mean 'maxRows'?)",
    ]);
    expect(
      readQueryBody({ ...minimal, readonly: true, isolation_level: 'x', colour: 1 }).warnings,
    ).toEqual([
      "unknown field 'readonly' (did you mean 'readOnly'?)",
      "unknown field 'isolation_level' (did you mean 'isolationLevel'?)",
      "unknown field 'colour'",
    ]);
    expect(suggestField('timeout', ['sql', 'timeoutMs'])).toBe('timeoutMs');
    expect(suggestField('sqll', ['sql', 'ssl'])).toBe('sql');
    expect(suggestField('params2', ['params'])).toBe('params');
    expect(suggestField('everything', ['params'])).toBeUndefined();
  });

  it('are not applied, and a body of known fields has no warnings', () => {
    const request = readQueryBody({ ...minimal, maxrows: 5 });
    expect(request.options.maxRows).toBeUndefined();
    expect(readQueryBody(minimal)).not.toHaveProperty('warnings');
    const everyField = {
      ...minimal,
      password: 'p',
      sslMode: 'disable',
      params: [1],
      timeoutMs: 10,
      maxRows: 2,
      rowMode: 'array',
      readOnly: true,
      cache: { ttlMs: 5 },
      isolationLevel: 'serializable',
      dryRun: false,
    };
    // `connection` names a server-held target in place of the target's fields (access.test.ts).
    expect(Object.keys(everyField).sort()).toEqual(
      Object.keys(QueryRequestSchema.properties)
        .filter((name) => name !== 'connection')
        .sort(),
    );
    expect(readQueryBody(everyField)).not.toHaveProperty('warnings');
  });

  it('do not include inherited properties', () => {
    const body = Object.assign(Object.create({ inherited: 1 }) as object, minimal);
    expect(readQueryBody(body)).not.toHaveProperty('warnings');
  });
});

describe('a schema compiled to check a body', () => {
  it("checks the builders' enum and oneOf as their JSON Schema says", () => {
    const read = compileShape(
      Type.Object({
        mode: Type.Optional(StringEnum(['object', 'array'] as const)),
        port: OneOf([Type.Integer(), Type.String()]),
      }),
    );
    expect(read({ mode: 'array', port: 1 })).toEqual({ mode: 'array', port: 1 });
    expect(read({ port: '1' })).toEqual({ port: '1' });
    expect(() => read({ mode: 'table', port: 1 })).toThrow("'mode' must be one of: object, array");
    expect(() => read({ port: true })).toThrow("'port' must be an integer from 1 to 65535");
  });

  it('refuses a oneOf whose branches may both match a value, which a union would not mean', () => {
    const overlapping = Type.Object({ n: OneOf([Type.Number(), Type.Integer()]) });
    expect(() => compileShape(overlapping)).toThrow('a oneOf whose branches may overlap');
  });
});

describe('one validator per body', () => {
  const MAX_IDLE_MS = 1000;
  const configured = {
    default: { host: 'h', port: 1, user: 'u', database: 'd', sslMode: 'disable' as const },
  };
  const connection = { host: 'db', port: 5432, user: 'u', database: 'd' };
  /** Each reader, a body it reads, and the schema its body is documented by. */
  const readers: [string, (body: unknown) => unknown, object, TObject][] = [
    ['query', (body) => readQueryBody(body), { ...connection, sql: 'x' }, QueryRequestSchema],
    [
      'query on a configured target',
      (body) => readQueryBody(body, configured),
      { sql: 'x' },
      Type.Omit(QueryRequestSchema, ['host', 'port', 'user', 'password', 'database', 'sslMode']),
    ],
    [
      'connection test',
      (body) => readConnectionCheckBody(body),
      connection,
      ConnectionTestRequestSchema,
    ],
    [
      'session opening',
      (body) => readSessionOpenBody(body, MAX_IDLE_MS),
      connection,
      SessionOpenRequestSchema,
    ],
    [
      'session query',
      (body) => readSessionQueryBody(body),
      { sql: 'x' },
      SessionQueryRequestSchema,
    ],
    ['cancel', (body) => readCancelBody(body), connection, CancelRequestSchema],
  ];
  const documentedBy = new Map(readers.map(([, , , schema]) => [schema, documented(schema)]));
  const FIELDS = [
    ...new Set(readers.flatMap(([, , , schema]) => Object.keys(schema.properties))),
    'maxrows',
  ];

  /** The body as docs/interface.md reads it, with the fields `schema` names only. */
  function asDocumented(body: Record<string, unknown>, schema: TObject): Record<string, unknown> {
    const read: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(body)) {
      if (value === null || !(name in schema.properties)) continue;
      read[name] = value;
    }
    if (read.sslMode === '') delete read.sslMode;
    if (typeof read.isolationLevel === 'string')
      read.isolationLevel = read.isolationLevel.toLowerCase();
    if (typeof read.port === 'string' && /^[0-9]{1,5}$/.test(read.port))
      read.port = Number(read.port);
    const cache = read.cache;
    if (typeof cache === 'object' && cache !== null && !Array.isArray(cache)) {
      // A null option is absent; a misspelt one is refused, null or not.
      const absent = ([name, value]: [string, unknown]) =>
        value === null && (name === 'ttlMs' || name === 'swrMs');
      read.cache = Object.fromEntries(Object.entries(cache).filter((entry) => !absent(entry)));
    }
    return read;
  }

  const awkward = fc.constantFrom(
    null,
    0,
    -1,
    1.5,
    '',
    'a\0b',
    '\uD800',
    '/socket',
    'SERIALIZABLE',
    '05432',
    '65536',
    2 ** 31,
    1e21,
    2 ** 64,
    { ttlMs: null },
    { ttl: 1 },
    { ttlMs: 5, ttl: null },
    [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],
  );
  const plausible = fc.constantFrom(true, 1, 5432, 'x', 'array', 'prefer', [1, 'a'], { ttlMs: 5 });
  const option = fc.constantFrom(null, 0, 5, 'x');
  const cacheOptions = fc.record(
    { ttlMs: option, swrMs: option, ttl: option },
    { requiredKeys: [] },
  );
  const anyValue = fc.oneof(plausible, awkward, cacheOptions, fc.jsonValue({ maxDepth: 3 }));
  const anyName = fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 4 }));
  /** Fields laid over a body each reader reads (or over nothing), or any JSON at all. */
  const anyBody = fc.oneof(
    fc.record({
      onValidBody: fc.boolean(),
      fields: fc.dictionary(anyName, anyValue, { maxKeys: 4 }),
    }),
    fc.record({ json: fc.jsonValue({ maxDepth: 2 }) }),
  );

  it('gives every body a typed request or a RequestError, and reads only what the schema describes', () => {
    const read = new Map<string, number>();
    fc.assert(
      fc.property(anyBody, (drawn) => {
        for (const [name, reader, validBody, schema] of readers) {
          const body =
            'json' in drawn
              ? drawn.json
              : { ...(drawn.onValidBody ? validBody : {}), ...drawn.fields };
          const outcome = requestOrRefusal(() => reader(body));
          if (outcome instanceof RequestError) {
            expect(outcome.message).toMatch(/\S/);
            // A body naming a connection needs credentials, which no body carries.
            expect([
              ErrorCodes.INVALID_REQUEST,
              ErrorCodes.MISSING_FIELDS,
              ErrorCodes.UNAUTHORIZED,
            ]).toContain(outcome.code);
            continue;
          }
          read.set(name, (read.get(name) ?? 0) + 1);
          const fields = asDocumented((body ?? {}) as Record<string, unknown>, schema);
          if (!documentedBy.get(schema)!(fields)) {
            throw new Error(`${name} read a body its schema refuses: ${JSON.stringify(body)}`);
          }
        }
      }),
      { numRuns: 3000, seed: 1052 },
    );
    // Bodies of every kind were read, not only refused.
    for (const [name] of readers) expect(read.get(name)).toBeGreaterThan(0);
  });

  const text = fc.string({ minLength: 1, maxLength: 12 });
  const optional = <T>(value: fc.Arbitrary<T>) => fc.option(value, { nil: undefined });
  /** Mostly a valid value, sometimes one of the wrong ones: most bodies must pass the schema. */
  const mostly = <T>(valid: fc.Arbitrary<T>, ...wrong: fc.Arbitrary<unknown>[]) =>
    fc.oneof({ arbitrary: valid as fc.Arbitrary<unknown>, weight: 8 }, ...wrong);
  const body = fc.record(
    {
      host: mostly(text, fc.constant('/socket'), fc.constant(''), fc.integer()),
      port: mostly(
        fc.integer({ min: 1, max: 65535 }),
        fc.integer({ min: -2, max: 70000 }),
        fc.constantFrom('5432', '0', 'x1', '65535', '65536', '099999'),
      ),
      user: mostly(text, fc.boolean()),
      database: text,
      sql: mostly(text, fc.constant({ text: 'SELECT 1' })),
      sslMode: optional(fc.constantFrom('disable', 'require', 'prefer', 'verify-full', 'maybe')),
      timeoutMs: optional(
        mostly(fc.integer({ min: 1, max: 9 }), fc.integer({ min: -1, max: 0 }), fc.double()),
      ),
      maxRows: optional(fc.integer({ min: 0, max: 1_000_001 })),
      rowMode: optional(fc.constantFrom('object', 'array', 'table')),
      readOnly: optional(mostly(fc.boolean(), fc.constant('yes'))),
      dryRun: optional(fc.boolean()),
      cache: optional(fc.oneof(fc.boolean(), fc.record({ ttlMs: fc.integer({ min: 0, max: 9 }) }))),
      isolationLevel: optional(fc.constantFrom('serializable', 'read committed', 'chaos')),
      params: optional(fc.array(fc.oneof(fc.integer(), text))),
    },
    { requiredKeys: ['host', 'port', 'user', 'database', 'sql'] },
  );
  const validQuery = documented(QueryRequestSchema);

  it('reads every body the documented schema accepts', () => {
    let accepted = 0;
    fc.assert(
      fc.property(body, (candidate) => {
        const defined = JSON.parse(JSON.stringify(candidate)) as Record<string, unknown>;
        if (!validQuery(defined)) return;
        accepted++;
        expect(() => readQueryBody(defined)).not.toThrow();
      }),
      { numRuns: 2000, seed: 1052 },
    );
    // The property must have been exercised, not skipped.
    expect(accepted).toBeGreaterThan(100);
  });
});
