/**
 * The connection a server offers the console (its default target, docs/decisions.md 10.48): read
 * from the page's meta element defensively, the form opens on it, and while the form stays on it
 * without a password the requests name no target, so the server's own credentials apply.
 */
import {
  connectionNamesOfMeta,
  connectionOfMeta,
  withPageConnection,
} from '../src/browser/page-connection';
import { blankForm, connectionFields, queryBody } from '../src/browser/request-fields';
import { loadConsoleAssets } from '../src';

const offered = {
  host: '127.0.0.1',
  port: '41234',
  user: 'postgres',
  database: 'postgres',
  sslMode: 'disable',
};
const meta = JSON.stringify({ ...offered, port: 41234 });

describe("the page's connection", () => {
  it('is read from the JSON of the meta element', () => {
    expect(connectionOfMeta(meta)).toEqual(offered);
  });

  it.each([
    ['absent', null],
    ['empty', ''],
    ['not JSON', '{host'],
    ['not an object', '"127.0.0.1"'],
    ['without a database', JSON.stringify({ ...offered, database: undefined, port: 1 })],
    ['with a port as text', JSON.stringify({ ...offered })],
  ])('is none when the content is %s', (_, content) => {
    expect(connectionOfMeta(content)).toBeUndefined();
  });

  it('replaces the connection of the stored form, keeping its other fields', () => {
    const stored = { ...blankForm(), host: 'db.example', port: '6543', maxRows: '50', name: 'old' };
    expect(withPageConnection(stored, offered)).toEqual({ ...stored, ...offered });
    expect(withPageConnection(stored, undefined)).toBe(stored);
  });

  it('makes requests without a target while the form is on it with no password', () => {
    const form = withPageConnection(blankForm(), offered);
    expect(connectionFields(form, offered)).toEqual({});
    expect(queryBody(form, 'SELECT 1', offered)).toEqual({
      sql: 'SELECT 1',
      rowMode: 'array',
      maxRows: 100_000,
    });
  });

  it('makes requests naming the target once a field or a password differs', () => {
    const form = withPageConnection(blankForm(), offered);
    expect(connectionFields({ ...form, database: 'other' }, offered)).toMatchObject({
      database: 'other',
      port: 41234,
    });
    expect(connectionFields({ ...form, password: 'p' }, offered)).toMatchObject({
      host: '127.0.0.1',
      password: 'p',
    });
    expect(connectionFields(form, undefined)).toMatchObject({ host: '127.0.0.1', port: 41234 });
  });
});

describe('the page a server sends', () => {
  it('names the offered connection in an attribute nothing in it can leave, and never a password', () => {
    const nonce = 'AAAAAAAAAAAAAAAAAAAAAA==';
    const connection = {
      host: '127.0.0.1',
      port: 5432,
      user: `o'neil`,
      database: 'a"><script>alert(1)</script>&amp;',
      sslMode: 'disable',
      password: 'secret',
    };
    const html = loadConsoleAssets().page(nonce, connection).toString('utf8');
    const content = /<meta name="sqlgate-connection" content="([^"]*)" \/>/.exec(html)?.[1];
    const decoded = (content ?? '').replace(/&#(\d+);/g, (_, code: string) =>
      String.fromCharCode(Number(code)),
    );
    const { password: _password, ...shown } = connection;
    expect(JSON.parse(decoded)).toEqual(shown);
    expect(html).not.toContain('secret');
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(loadConsoleAssets().page(nonce).toString('utf8')).toContain(
      '<meta name="sqlgate-connection" content="" />',
    );
  });
});

describe("the server's named connections", () => {
  it('are read from a JSON array of names, anything else being no names', () => {
    expect(connectionNamesOfMeta('["app","reports","app",""]')).toEqual(['app', 'reports']);
    for (const content of [null, '', '{', '{"app":1}', '[1,null]']) {
      expect(connectionNamesOfMeta(content)).toEqual([]);
    }
  });

  it('are written into the page as names only, in an attribute nothing in them can leave', () => {
    const nonce = 'AAAAAAAAAAAAAAAAAAAAAA==';
    const names = ['app', 'a"><script>alert(1)</script>'];
    const html = loadConsoleAssets().page(nonce, undefined, names).toString('utf8');
    const content = /<meta name="sqlgate-connection-names" content="([^"]*)" \/>/.exec(html)?.[1];
    const decoded = (content ?? '').replace(/&#(\d+);/g, (_, code: string) =>
      String.fromCharCode(Number(code)),
    );
    expect(connectionNamesOfMeta(decoded)).toEqual(names);
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(loadConsoleAssets().page(nonce).toString('utf8')).toContain(
      '<meta name="sqlgate-connection-names" content="" />',
    );
  });
});
