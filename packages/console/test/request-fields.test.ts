import {
  blankForm,
  CONSOLE_DEFAULT_MAX_ROWS,
  connectionFields,
  connectionLabel,
  credentialHeaders,
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

describe('the request of a form that logs in with a key or token', () => {
  const keyForm = {
    ...blankForm(),
    login: 'key',
    connection: ' app ',
    token: ' the-key-0123456789 ',
    password: 'never-sent',
  };

  it('names the connection in the body and carries the token in Authorization only', () => {
    expect(queryBody(keyForm, 'SELECT 1')).toEqual({
      connection: 'app',
      sql: 'SELECT 1',
      rowMode: 'array',
    });
    expect(connectionFields(keyForm)).toEqual({ connection: 'app' });
    expect(credentialHeaders(keyForm)).toEqual({ authorization: 'Bearer the-key-0123456789' });
    expect(credentialHeaders(blankForm())).toEqual({});
  });

  it("sends the form's own maxRows, and none when it is empty (a key may cap it)", () => {
    expect(queryBody({ ...keyForm, maxRows: '50' }, 'SELECT 1').maxRows).toBe(50);
    expect(queryBody(keyForm, 'SELECT 1')).not.toHaveProperty('maxRows');
  });

  it('asks for the connection name and the token', () => {
    for (const [form, field] of [
      [{ ...keyForm, connection: ' ' }, 'connection'],
      [{ ...keyForm, token: '' }, 'token'],
    ] as const) {
      expect(() => queryBody(form, 'SELECT 1')).toThrow(FormError);
      try {
        queryBody(form, 'SELECT 1');
      } catch (error) {
        expect((error as FormError).field).toBe(field);
      }
    }
  });

  it('labels the connection by its name, never by the token', () => {
    expect(connectionLabel(keyForm)).toBe('connection app');
    expect(connectionLabel({ ...keyForm, name: 'reports' })).toBe('reports (connection app)');
    expect(savedName(keyForm)).not.toContain('the-key');
  });
});
