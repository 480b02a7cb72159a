import {
  blankForm,
  CONSOLE_DEFAULT_MAX_ROWS,
  connectionFields,
  connectionLabel,
  savedName,
  FormError,
  queryBody,
  usesCache,
} from '../src/browser/request-fields';

describe('the request a form makes', () => {
  it('sends the connection, arrays of rows and the console’s row limit by default', () => {
    const form = { ...blankForm(), database: 'test' };
    expect(queryBody(form, 'SELECT 1')).toEqual({
      host: '127.0.0.1',
      port: 5432,
      user: 'postgres',
      database: 'test',
      sslMode: 'prefer',
      sql: 'SELECT 1',
      rowMode: 'array',
      maxRows: CONSOLE_DEFAULT_MAX_ROWS,
    });
  });

  it('sends every option the form holds', () => {
    const form = {
      ...blankForm(),
      password: 'secret',
      timeoutMs: '500',
      maxRows: '7',
      readOnly: true,
      dryRun: true,
      isolationLevel: 'serializable',
      cache: '60000',
      params: '[1, "two", null]',
    };
    expect(queryBody(form, 'SELECT $1')).toMatchObject({
      password: 'secret',
      timeoutMs: 500,
      maxRows: 7,
      readOnly: true,
      dryRun: true,
      isolationLevel: 'serializable',
      cache: { ttlMs: 60000 },
      params: [1, 'two', null],
    });
    expect(queryBody({ ...form, cache: 'on' }, 'SELECT 1').cache).toBe(true);
    expect(usesCache(form)).toBe(true);
    expect(usesCache(blankForm())).toBe(false);
  });

  it('names the field it cannot use', () => {
    const cases: [Partial<ReturnType<typeof blankForm>>, string][] = [
      [{ host: '  ' }, 'host'],
      [{ port: '70000' }, 'port'],
      [{ port: '1e3' }, 'port'],
      [{ timeoutMs: '-1' }, 'timeoutMs'],
      [{ maxRows: '1000001' }, 'maxRows'],
      [{ cache: 'yes' }, 'cache'],
      [{ params: '{"a":1}' }, 'params'],
      [{ params: '[1,' }, 'params'],
    ];
    for (const [change, field] of cases) {
      let thrown: unknown;
      try {
        queryBody({ ...blankForm(), ...change }, 'SELECT 1');
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(FormError);
      expect((thrown as FormError).field).toBe(field);
    }
  });

  it('leaves the password out when there is none, and labels connections', () => {
    expect(connectionFields(blankForm())).not.toHaveProperty('password');
    expect(connectionLabel(blankForm())).toBe('postgres@127.0.0.1:5432/postgres');
    // A name never hides the target: an edited database shows.
    expect(connectionLabel({ ...blankForm(), name: ' prod ' })).toBe(
      'prod (postgres@127.0.0.1:5432/postgres)',
    );
    expect(connectionLabel({ ...blankForm(), name: 'prod', database: 'other' })).toBe(
      'prod (postgres@127.0.0.1:5432/other)',
    );
    expect(savedName({ ...blankForm(), name: ' prod ' })).toBe('prod');
    expect(savedName(blankForm())).toBe('postgres@127.0.0.1:5432/postgres');
  });
});
