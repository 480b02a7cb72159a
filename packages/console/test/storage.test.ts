import { blankForm } from '../src/browser/request-fields';
import { ConsoleStorage, HISTORY_LIMIT, type HistoryEntry } from '../src/browser/storage';

/** A Storage over a Map, as localStorage behaves (strings only); `quota` makes writes fail. */
class MapStorage implements Storage {
  readonly items = new Map<string, string>();
  quota = Infinity;
  get length(): number {
    return this.items.size;
  }
  clear(): void {
    this.items.clear();
  }
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  key(index: number): string | null {
    return [...this.items.keys()][index] ?? null;
  }
  removeItem(key: string): void {
    this.items.delete(key);
  }
  setItem(key: string, value: string): void {
    if (value.length > this.quota) throw new Error('QuotaExceededError');
    this.items.set(key, String(value));
  }
}

/** Where the console keeps the form as the page left it (storage.ts). */
const CURRENT_KEY_FOR_TEST = 'sqlgate.console.current';

function entry(n: number): HistoryEntry {
  return {
    at: new Date(n).toISOString(),
    sql: `SELECT ${n}`,
    connection: 'c',
    outcome: 'succeeded',
    statements: 1,
    durationMs: n,
  };
}

describe('ConsoleStorage', () => {
  it('keeps a password only when "remember password" is ticked', () => {
    const backing = new MapStorage();
    const storage = new ConsoleStorage(backing);
    storage.saveConnection({ ...blankForm(), name: 'forget', password: 'p1' });
    storage.saveConnection({
      ...blankForm(),
      name: 'keep',
      password: 'p2',
      rememberPassword: true,
    });
    storage.saveCurrentForm({ ...blankForm(), password: 'p3' });
    const text = [...backing.items.values()].join('\n');
    expect(text).not.toContain('p1');
    expect(text).not.toContain('p3');
    expect(
      new ConsoleStorage(backing).connections().map((form) => [form.name, form.password]),
    ).toEqual([
      ['forget', ''],
      ['keep', 'p2'],
    ]);
  });

  it('never keeps a key or token, whatever is ticked', () => {
    const backing = new MapStorage();
    const storage = new ConsoleStorage(backing);
    const form = {
      ...blankForm(),
      login: 'key',
      connection: 'app',
      token: 'secret-token-0123456789',
      rememberPassword: true,
    };
    storage.saveConnection({ ...form, name: 'by-key' });
    storage.saveCurrentForm(form);
    expect([...backing.items.values()].join('\n')).not.toContain('secret-token');
    backing.items.set(CURRENT_KEY_FOR_TEST, JSON.stringify(form));
    expect(new ConsoleStorage(backing).currentForm()).toMatchObject({
      login: 'key',
      connection: 'app',
      token: '',
    });
  });

  it('replaces a connection saved under the same label, and deletes by label', () => {
    const storage = new ConsoleStorage(new MapStorage());
    storage.saveConnection({ ...blankForm(), name: 'a', host: 'one' });
    expect(
      storage.saveConnection({ ...blankForm(), name: 'a', host: 'two' }).map((form) => form.host),
    ).toEqual(['two']);
    expect(storage.deleteConnection('a')).toEqual([]);
  });

  it('keeps the last HISTORY_LIMIT runs, newest first', () => {
    const storage = new ConsoleStorage(new MapStorage());
    for (let n = 1; n <= HISTORY_LIMIT + 5; n++)
      expect(storage.addHistory(entry(n)).saved).toBe(true);
    const history = storage.history();
    expect(history).toHaveLength(HISTORY_LIMIT);
    expect(history[0]?.sql).toBe(`SELECT ${HISTORY_LIMIT + 5}`);
    expect(history.at(-1)?.sql).toBe('SELECT 6');
  });

  it('reads what another version or a person wrote without failing', () => {
    const backing = new MapStorage();
    backing.setItem(
      'sqlgate.console.connections',
      '[{"name": 5, "host": "h", "extra": true}, null, "x"]',
    );
    backing.setItem('sqlgate.console.history', '[{"sql": 1}, 3]');
    backing.setItem('sqlgate.console.current', 'not json');
    backing.setItem('sqlgate.console.theme', 'purple');
    const storage = new ConsoleStorage(backing);
    expect(storage.connections()[0]).toEqual({ ...blankForm(), host: 'h' });
    expect(storage.history()).toEqual([]);
    expect(storage.currentForm()).toEqual(blankForm());
    expect(storage.theme()).toBe('system');
  });

  it('works on when the storage is full, and says when a run was not kept', () => {
    const backing = new MapStorage();
    backing.quota = 10;
    const storage = new ConsoleStorage(backing);
    expect(storage.addHistory(entry(1))).toEqual({ entries: [], saved: false });
    expect(() => storage.saveSql('SELECT 1 -- longer than the quota')).not.toThrow();
    expect(storage.history()).toEqual([]);
  });

  it('drops the oldest runs, not the newest, when the storage fills up', () => {
    const backing = new MapStorage();
    const storage = new ConsoleStorage(backing);
    for (let n = 1; n <= 8; n++) storage.addHistory(entry(n));
    backing.quota = (backing.getItem('sqlgate.console.history') as string).length;
    const { entries, saved } = storage.addHistory(entry(9));
    expect(saved).toBe(true);
    expect(entries[0]?.sql).toBe('SELECT 9');
    expect(storage.history().map((e) => e.sql)).toEqual(entries.map((e) => e.sql));
    expect(entries.length).toBeLessThan(9);
  });

  it('shows at most HISTORY_LIMIT runs whatever the storage holds', () => {
    const backing = new MapStorage();
    backing.setItem(
      'sqlgate.console.history',
      JSON.stringify(Array.from({ length: 500 }, (_, n) => entry(n))),
    );
    expect(new ConsoleStorage(backing).history()).toHaveLength(HISTORY_LIMIT);
  });

  it('keeps saved queries, and leaves out entries another version or a person wrote', () => {
    const storage = new MapStorage();
    const consoleStorage = new ConsoleStorage(storage);
    const query = { name: 'q', folder: 'f', sql: 'SELECT 1', savedAt: '2026-01-01T00:00:00.000Z' };
    expect(consoleStorage.saveSavedQueries([query])).toBe(true);
    expect(new ConsoleStorage(storage).savedQueries()).toEqual([query]);
    storage.setItem(
      'sqlgate.console.saved-queries',
      JSON.stringify([query, { name: 1 }, null, { name: ' ', sql: 'x' }]),
    );
    expect(consoleStorage.savedQueries()).toEqual([query]);
    storage.quota = 10;
    expect(consoleStorage.saveSavedQueries([query, { ...query, name: 'r' }])).toBe(false);
    expect(consoleStorage.savedQueries()).toEqual([query]);
  });
});
