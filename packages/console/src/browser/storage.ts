/**
 * What the console keeps in the browser's localStorage: saved connections (a password only when
 * its "remember password" box was ticked, a key or token never), the history of the last runs,
 * saved queries (saved-queries.ts) and the theme. Each entry
 * is read defensively: another version of the console, or a person with the developer tools, may
 * have written anything there.
 */
import { blankForm, savedName, type ConnectionForm } from './request-fields';
import { savedQueryOf, type SavedQuery } from './saved-queries';

const CONNECTIONS_KEY = 'sqlgate.console.connections';
const CURRENT_KEY = 'sqlgate.console.current';
const HISTORY_KEY = 'sqlgate.console.history';
const THEME_KEY = 'sqlgate.console.theme';
const SQL_KEY = 'sqlgate.console.sql';
const SAVED_QUERIES_KEY = 'sqlgate.console.saved-queries';

export const HISTORY_LIMIT = 100;

export type Theme = 'system' | 'light' | 'dark';

export interface HistoryEntry {
  at: string;
  sql: string;
  connection: string;
  outcome: string;
  statements: number;
  durationMs: number;
}

/**
 * The form as it may be stored: no password unless the user asked for it, and never the key or
 * token, which lives only in the page (a reload asks for it again).
 */
export function storable(form: ConnectionForm): ConnectionForm {
  return { ...form, token: '', password: form.rememberPassword ? form.password : '' };
}

export class ConsoleStorage {
  constructor(private readonly storage: Storage) {}

  connections(): ConnectionForm[] {
    const saved = this.read(CONNECTIONS_KEY);
    return Array.isArray(saved) ? saved.map(formOf) : [];
  }

  /** Saves under the form's name (its target without one), replacing a connection of that name. */
  saveConnection(form: ConnectionForm): ConnectionForm[] {
    const name = savedName(form);
    const others = this.connections().filter((saved) => savedName(saved) !== name);
    const connections = [...others, storable(form)].sort((a, b) =>
      savedName(a).localeCompare(savedName(b)),
    );
    this.write(CONNECTIONS_KEY, connections);
    return connections;
  }

  deleteConnection(name: string): ConnectionForm[] {
    const connections = this.connections().filter((saved) => savedName(saved) !== name);
    this.write(CONNECTIONS_KEY, connections);
    return connections;
  }

  /** The form as the page left it, so a reload keeps what was typed (the password only if remembered). */
  currentForm(): ConnectionForm {
    const saved = this.read(CURRENT_KEY);
    return saved === undefined ? blankForm() : formOf(saved);
  }

  saveCurrentForm(form: ConnectionForm): void {
    this.write(CURRENT_KEY, storable(form));
  }

  history(): HistoryEntry[] {
    const saved = this.read(HISTORY_KEY);
    return Array.isArray(saved) ? saved.filter(isHistoryEntry).slice(0, HISTORY_LIMIT) : [];
  }

  /**
   * Adds a run first; the oldest runs past HISTORY_LIMIT are dropped, and more of the oldest when
   * the storage is full. `saved` is false when even the new run alone does not fit.
   */
  addHistory(entry: HistoryEntry): { entries: HistoryEntry[]; saved: boolean } {
    let entries = [entry, ...this.history()].slice(0, HISTORY_LIMIT);
    while (!this.write(HISTORY_KEY, entries)) {
      if (entries.length === 1) return { entries: this.history(), saved: false };
      entries = entries.slice(0, Math.ceil(entries.length / 2));
    }
    return { entries, saved: true };
  }

  clearHistory(): void {
    this.storage.removeItem(HISTORY_KEY);
  }

  /** The editor's text as the page left it. */
  sql(): string | undefined {
    return this.storage.getItem(SQL_KEY) ?? undefined;
  }

  saveSql(sql: string): void {
    try {
      this.storage.setItem(SQL_KEY, sql);
    } catch {
      // A text larger than the storage quota is simply not kept.
    }
  }

  /** The saved queries; an entry that is not one (another version wrote it) is left out. */
  savedQueries(): SavedQuery[] {
    const saved = this.read(SAVED_QUERIES_KEY);
    if (!Array.isArray(saved)) return [];
    return saved.flatMap((entry) => {
      const query = savedQueryOf(entry);
      return query && query.name !== '' ? [query] : [];
    });
  }

  /**
   * Replaces the saved queries with `queries`, in one write: false, and nothing changed, when the
   * storage is full.
   */
  saveSavedQueries(queries: SavedQuery[]): boolean {
    return this.write(SAVED_QUERIES_KEY, queries);
  }

  theme(): Theme {
    const theme = this.storage.getItem(THEME_KEY);
    return theme === 'light' || theme === 'dark' ? theme : 'system';
  }

  saveTheme(theme: Theme): void {
    this.storage.setItem(THEME_KEY, theme);
  }

  private read(key: string): unknown {
    const text = this.storage.getItem(key);
    if (text === null) return undefined;
    try {
      return JSON.parse(text);
    } catch {
      return undefined;
    }
  }

  /** A full storage (quota) loses the write, never the page: false then. */
  private write(key: string, value: unknown): boolean {
    try {
      this.storage.setItem(key, JSON.stringify(value));
      return true;
    } catch {
      return false;
    }
  }
}

/** A stored form with every field of the current version, of the right type. */
function formOf(saved: unknown): ConnectionForm {
  const form = blankForm();
  if (typeof saved !== 'object' || saved === null) return form;
  for (const [key, blank] of Object.entries(form) as [keyof ConnectionForm, unknown][]) {
    const value = (saved as Record<string, unknown>)[key];
    if (typeof value === typeof blank) (form as unknown as Record<string, unknown>)[key] = value;
  }
  if (!form.rememberPassword) form.password = '';
  form.token = '';
  return form;
}

function isHistoryEntry(entry: unknown): entry is HistoryEntry {
  if (typeof entry !== 'object' || entry === null) return false;
  const { at, sql, connection, outcome, statements, durationMs } = entry as Record<string, unknown>;
  return (
    typeof at === 'string' &&
    typeof sql === 'string' &&
    typeof connection === 'string' &&
    typeof outcome === 'string' &&
    typeof statements === 'number' &&
    typeof durationMs === 'number'
  );
}
