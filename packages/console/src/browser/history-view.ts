/** The last runs (localStorage), newest first; each can be loaded back and run again. */
import { h } from './dom';
import type { ConsoleStorage, HistoryEntry } from './storage';

export class HistoryView {
  readonly element: HTMLElement;
  private readonly list = h('ol', { className: 'history', attrs: { 'data-testid': 'history' } });

  constructor(
    private readonly storage: ConsoleStorage,
    private readonly rerun: (sql: string) => void,
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
    this.show(storage.history());
  }

  show(entries: HistoryEntry[]): void {
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
          h('button', {
            text: 'Run again',
            attrs: { type: 'button' },
            on: { click: () => this.rerun(entry.sql) },
          }),
        ]),
      ),
    );
    if (entries.length === 0) this.list.append(h('li', { className: 'empty', text: 'No run yet' }));
  }

  add(entry: HistoryEntry): void {
    this.show(this.storage.addHistory(entry));
  }
}
