import {
  decodeSql,
  encodeSql,
  MAX_LINK_SQL_LENGTH,
  shareLink,
  sqlOfFragment,
} from '../src/browser/share-link';

const SQL = "SELECT 'ünïcode 🐘', $$a+b/c$$;\r\n-- ?&#=\nSELECT 2";

describe('share links', () => {
  it('carry the SQL in the fragment as base64url, and give it back whole', () => {
    const made = shareLink('http://127.0.0.1:3000/db/', SQL);
    if (!('link' in made)) throw new Error(made.refused);
    const url = new URL(made.link);
    expect(`${url.origin}${url.pathname}`).toBe('http://127.0.0.1:3000/db/');
    expect(url.hash).toMatch(/^#sql=[A-Za-z0-9_-]+$/);
    expect(sqlOfFragment(url.hash)).toEqual({ sql: SQL });
    expect(decodeSql(encodeSql(''))).toBe('');
  });

  it('are read in standard base64 too, with + and / and = padding', () => {
    expect(sqlOfFragment('#sql=U0VMRUNUICc/Pz4nOw==')).toEqual({ sql: "SELECT '??>';" });
    expect(sqlOfFragment('#sql=U0VMRUNUIDEgLS0gfj8+')).toEqual({ sql: 'SELECT 1 -- ~?>' });
    expect(sqlOfFragment('#sql=U0VMRUNUIDEgLS0gfj8%2B')).toEqual({ sql: 'SELECT 1 -- ~?>' });
  });

  it('carry nothing but the SQL: no user, password, query string or earlier fragment of the address', () => {
    const made = shareLink(
      'https://alice:s3cret@db.example/console/?token=abc#sql=old',
      'SELECT 1',
    );
    expect(made).toEqual({ link: `https://db.example/console/#sql=${encodeSql('SELECT 1')}` });
  });

  it('are refused for an empty editor and for SQL too long to carry', () => {
    expect(shareLink('http://h/', ' \n')).toHaveProperty('refused');
    expect(shareLink('http://h/', 'x'.repeat(MAX_LINK_SQL_LENGTH + 1))).toHaveProperty('refused');
  });

  it.each([
    ['no fragment', ''],
    ['another fragment', '#results'],
  ])('are not read from %s', (_, hash) => {
    expect(sqlOfFragment(hash)).toBeUndefined();
  });

  it.each([
    ['characters outside base64', '#sql=a*b'],
    ['bytes that are not UTF-8', `#sql=${btoa('\xff\xfe').replace(/=+$/, '')}`],
    ['a cut base64 text', '#sql=A'],
  ])('say so when the SQL cannot be read: %s', (_, hash) => {
    expect(sqlOfFragment(hash)).toEqual({
      error: 'The link’s SQL could not be read: it was cut or changed',
    });
  });
});
