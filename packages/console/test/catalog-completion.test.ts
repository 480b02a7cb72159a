/**
 * Completion from the catalog, through @codemirror/lang-sql itself: the namespace must have the
 * shape lang-sql reads (aliases, schema levels, `apply`), which only its own completion can tell.
 */
import {
  CompletionContext,
  type Completion,
  type CompletionResult,
} from '@codemirror/autocomplete';
import { EditorState } from '@codemirror/state';
import { catalogOf } from '../src/browser/catalog';
import { catalogNamespace, elsewhereCompletions } from '../src/browser/catalog-completion';
import { sqlLanguage } from '../src/browser/schema-completion';
import { FUNCTION_ROWS, KEY_ROWS, RELATION_ROWS, sampleCatalog } from './catalog-fixture';

/** The completions offered at `|` in `text`, as Ctrl+Space asks for them. */
async function completionsAt(text: string): Promise<Completion[]> {
  const pos = text.indexOf('|');
  const state = EditorState.create({
    doc: text.replace('|', ''),
    extensions: [sqlLanguage(sampleCatalog())],
  });
  const context = new CompletionContext(state, pos, true);
  const sources = state.languageDataAt<(c: CompletionContext) => unknown>('autocomplete', pos);
  const results = await Promise.all(sources.map((source) => source(context)));
  return results.flatMap((result) => (result ? (result as CompletionResult).options : []));
}

function applied(options: Completion[], label: string): string[] {
  return options
    .filter((option) => option.label === label)
    .map((option) => (typeof option.apply === 'string' ? option.apply : option.label));
}

describe('completion from the catalog', () => {
  it('offers the default schema’s tables as they are, and other schemas’ qualified', async () => {
    const options = await completionsAt('SELECT * FROM |');
    expect(applied(options, 'users')).toEqual(['users']);
    expect(applied(options, 'Order Items')).toEqual(['shop."Order Items"']);
    expect(applied(options, 'totals')).toEqual(['shop.totals']);
    expect(applied(options, 'shop')).toEqual(['shop']);
    expect(applied(options, 'Reports')).toEqual(['"Reports"']);
  });

  it('offers a schema’s relations and functions after `schema.`', async () => {
    const labels = (await completionsAt('SELECT * FROM shop.|')).map((option) => option.label);
    expect(labels).toEqual(expect.arrayContaining(['Order Items', 'totals', 'recent', 'total']));
    expect(labels).not.toContain('users');
  });

  it('offers the columns of an alias declared in FROM, quoted when needed', async () => {
    const options = await completionsAt('SELECT i.| FROM shop."Order Items" i');
    expect(options.map((option) => option.label)).toEqual(['id', 'user']);
    expect(applied(options, 'user')).toEqual(['"user"']);
    const users = await completionsAt('SELECT u.| FROM users AS u');
    expect(users.map((option) => option.label)).toEqual(['id']);
  });

  it('offers nothing after a name it does not know', async () => {
    expect(await completionsAt('SELECT x.| FROM elsewhere x')).toEqual([]);
  });
});

it('escapes a dot inside a name, which lang-sql would read as a level', () => {
  const catalog = catalogOf(
    [{ schema: 'public', schema_sql: 'public', name: 'a.b', name_sql: '"a.b"', kind: 'r' }],
    [],
    [],
  );
  expect(catalogNamespace(catalog)).toEqual({
    public: {
      self: { label: 'public', type: 'namespace', detail: 'schema' },
      children: {
        'a\\.b': {
          self: { label: 'a.b', type: 'class', detail: 'table', apply: '"a.b"' },
          children: [],
        },
      },
    },
  });
});

it('leaves the default schema out of the qualified names', () => {
  const labels = elsewhereCompletions(sampleCatalog()).map((option) => option.apply);
  expect(labels).toEqual([
    '"Reports".run',
    'shop."Order Items"',
    'shop.totals',
    'shop.recent',
    'shop.total',
  ]);
});

it('shows a name holding bidirectional formatting characters escaped, and inserts it as it is', () => {
  const spoofing = {
    ...RELATION_ROWS[1],
    name: 'rep\u202Egpj.exe',
    name_sql: '"rep\u202Egpj.exe"',
  };
  const catalog = catalogOf([...RELATION_ROWS, spoofing], KEY_ROWS, FUNCTION_ROWS);
  const option = elsewhereCompletions(catalog).find((each) => each.label === 'rep\u202Egpj.exe');
  expect(option).toMatchObject({
    displayLabel: 'rep\\u202Egpj.exe',
    apply: 'shop."rep\u202Egpj.exe"',
  });
  const plain = elsewhereCompletions(catalog).find((each) => each.label === 'totals');
  expect(plain).not.toHaveProperty('displayLabel');
});
