/**
 * The last runs (localStorage), newest first. Each can be opened in the editor, or run again on
 * the connection the form holds now, which its button names (an entry records its connection's
 * label, never its password, so it cannot reconnect by itself).
 */
import { button, h, toast } from './dom';
import type { ConsoleStorage, HistoryEntry } from './storage';

export class HistoryView {
  readonly element: HTMLElement;
  private readonly list = h('ol', { className: 'history', attrs: { 'data-testid': 'history' } });
  private entries: HistoryEntry[];

  constructor(
    private readonly storage: ConsoleStorage,
    private readonly open: (sql: string, run: boolean) => void,
    private readonly currentConnection: () => string,
  ) {
    this.element = h('section', { className: 'history-view', attrs: { 'aria-label': 'History' } }, [
      h('div', { className: 'toolbar' }, [
        h('button', {
          text: 'Clear history',
          attrs: { type: 'button' },
          on: {
            click: () => {
              storage.clearHistory();
              this.show([]);
            },
          },
        }),
      ]),
      this.list,
    ]);
    this.entries = storage.history();
    this.show(this.entries);
  }

  /** Shows the entries again (the connection the buttons name changed). */
  refresh(): void {
    this.show(this.entries);
  }

  add(entry: HistoryEntry): void {
    const { entries, saved } = this.storage.addHistory(entry);
    if (!saved)
      toast('This run is too large for the browser’s storage: it is not kept in the history.');
    this.show(entries);
  }

  private show(entries: HistoryEntry[]): void {
    this.entries = entries;
    const connection = this.currentConnection();
    this.list.replaceChildren(
      ...entries.map((entry) =>
        h('li', { className: `history-entry ${entry.outcome}` }, [
          h('div', { className: 'history-meta' }, [
            `${new Date(entry.at).toLocaleString()} · ${entry.connection} · ${entry.outcome} · ${entry.statements} statement(s) · ${entry.durationMs} ms`,
          ]),
          h('pre', {
            className: 'history-sql',
            text: entry.sql.length > 2000 ? `${entry.sql.slice(0, 2000)}…` : entry.sql,
          }),
          h('div', { className: 'toolbar' }, [
            button('Open in editor', () => this.open(entry.sql, false)),
            button(`Run again on ${connection}`, () => this.open(entry.sql, true), {
              'data-action': 'run-again',
            }),
          ]),
        ]),
      ),
    );
    if (entries.length === 0) this.list.append(h('li', { className: 'empty', text: 'No run yet' }));
  }
}
