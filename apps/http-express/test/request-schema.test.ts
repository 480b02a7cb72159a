/**
 * The hand-written validator of POST /api/query bodies against QueryRequestSchema: what the schema
 * accepts, the validator accepts too (the schema cannot say "no NUL character", so the generated
 * strings hold none), and fields outside the schema are named, not refused.
 */
import Ajv2020 from 'ajv/dist/2020';
import fc from 'fast-check';
import { QueryRequestSchema, readQueryBody, suggestField } from '../src/contract';

const validateSchema = new Ajv2020({ strict: false }).compile(
  JSON.parse(JSON.stringify(QueryRequestSchema)) as object,
);

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
    expect(Object.keys(everyField).sort()).toEqual(
      Object.keys(QueryRequestSchema.properties).sort(),
    );
    expect(readQueryBody(everyField)).not.toHaveProperty('warnings');
  });

  it('do not include inherited properties', () => {
    const body = Object.assign(Object.create({ inherited: 1 }) as object, minimal);
    expect(readQueryBody(body)).not.toHaveProperty('warnings');
  });
});

describe('the schema and the validator', () => {
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

  it('agree: every body the schema accepts is accepted by the validator', () => {
    let accepted = 0;
    fc.assert(
      fc.property(body, (candidate) => {
        const defined = JSON.parse(JSON.stringify(candidate)) as Record<string, unknown>;
        if (!validateSchema(defined)) return;
        accepted++;
        expect(() => readQueryBody(defined)).not.toThrow();
      }),
      { numRuns: 2000 },
    );
    // The property must have been exercised, not skipped.
    expect(accepted).toBeGreaterThan(100);
  });
});
