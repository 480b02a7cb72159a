/**
 * The "Saved" view: the editor's SQL saved under a name in a folder (localStorage, storage.ts),
 * listed by folder, each opened, run, linked to, renamed or deleted; all of them exported as a JSON
 * file and imported from one (saved-queries.ts says how a bad file and duplicates are handled).
 */
import { button, download, h } from './dom';
import {
  describe,
  exportedFile,
  groupedByFolder,
  importedQueries,
  MAX_IMPORT_BYTES,
  mergedImport,
  nameProblem,
  renamedQuery,
  tidyName,
  withoutQuery,
  withQuery,
  type SavedQuery,
} from './saved-queries';
import type { ConsoleStorage } from './storage';
import { visibleName } from './visible-text';

export interface SavedViewActions {
  /** The editor's text now. */
  currentSql(): string;
  /** Puts `sql` in the editor, and runs it when `run`. */
  open(sql: string, run: boolean): void;
  /** Offers a link that opens `sql` (share-link.ts). */
  link(sql: string): void;
}

export class SavedView {
  readonly element: HTMLElement;
  private readonly nameInput = h('input', {
    attrs: { id: 'saved-name', type: 'text', autocomplete: 'off', spellcheck: 'false' },
  });
  private readonly folderInput = h('input', {
    attrs: {
      id: 'saved-folder',
      type: 'text',
      autocomplete: 'off',
      spellcheck: 'false',
      list: 'saved-folders',
      placeholder: 'none',
    },
  });
  private readonly folders = h('datalist', { attrs: { id: 'saved-folders' } });
  private readonly fileInput = h('input', {
    attrs: { type: 'file', accept: 'application/json,.json', hidden: '' },
  });
  private readonly status = h('p', {
    className: 'form-status',
    attrs: { role: 'status', 'data-testid': 'saved-status' },
  });
  private readonly list = h('div', {
    className: 'saved-queries',
    attrs: { 'data-testid': 'saved-queries' },
  });
  private queries: SavedQuery[];

  constructor(
    private readonly storage: ConsoleStorage,
    private readonly actions: SavedViewActions,
  ) {
    const form = h('form', { className: 'save-query', attrs: { 'aria-label': 'Save a query' } }, [
      labelled('Name', this.nameInput),
      labelled('Folder', this.folderInput),
      this.folders,
      h('button', {
        className: 'primary',
        text: 'Save the editor’s SQL',
        attrs: { type: 'submit', 'data-action': 'save-query' },
      }),
    ]);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.saveCurrent();
    });
    this.fileInput.addEventListener('change', () => void this.importFile());
    this.element = h(
      'section',
      { className: 'saved-view', attrs: { 'aria-label': 'Saved queries' } },
      [
        form,
        h('div', { className: 'toolbar' }, [
          button('Export all', () => this.exportAll(), { 'data-action': 'export-saved' }),
          button('Import…', () => this.fileInput.click(), { 'data-action': 'import-saved' }),
          this.fileInput,
        ]),
        this.status,
        this.list,
      ],
    );
    this.queries = storage.savedQueries();
    this.show();
  }

  /** Puts the cursor in the name field, to save what the editor holds. */
  focusName(): void {
    this.nameInput.focus();
  }

  private saveCurrent(): void {
    const name = tidyName(this.nameInput.value);
    const folder = tidyName(this.folderInput.value);
    const problem = nameProblem(name, folder);
    if (problem) {
      this.say(problem);
      this.nameInput.focus();
      return;
    }
    const query = {
      name,
      folder,
      sql: this.actions.currentSql(),
      savedAt: new Date().toISOString(),
    };
    const { queries, replaced } = withQuery(this.queries, query);
    if (this.keep(queries)) this.say(`${replaced ? 'Replaced' : 'Saved'} ${describe(query)}`);
  }

  /** Writes `queries`; on a full storage, says so and keeps what was there. */
  private keep(queries: SavedQuery[]): boolean {
    if (!this.storage.saveSavedQueries(queries)) {
      this.say('The browser’s storage is full: nothing was saved');
      return false;
    }
    this.queries = queries;
    this.show();
    return true;
  }

  private say(message: string): void {
    this.status.textContent = message;
  }

  private exportAll(): void {
    if (this.queries.length === 0) {
      this.say('There is no saved query to export');
      return;
    }
    const text = exportedFile(this.queries, new Date());
    download(new Blob([text], { type: 'application/json' }), 'sqlgate-saved-queries.json');
    this.say(`Exported ${this.queries.length} saved queries`);
  }

  /** Reads the chosen file whole, checks all of it, then keeps it in one write or not at all. */
  private async importFile(): Promise<void> {
    const file = this.fileInput.files?.[0];
    this.fileInput.value = '';
    if (!file) return;
    if (file.size > MAX_IMPORT_BYTES) {
      this.say(
        `${file.name} is larger than ${MAX_IMPORT_BYTES / 1024 / 1024} MiB: nothing was imported`,
      );
      return;
    }
    const read = importedQueries(await file.text());
    if ('error' in read) {
      this.say(`${file.name}: ${read.error}`);
      return;
    }
    const merged = mergedImport(this.queries, read.queries);
    if (this.keep(merged.queries)) {
      this.say(
        `Imported ${file.name}: ${merged.added} added, ${merged.replaced} replaced, ${merged.unchanged} unchanged`,
      );
    }
  }

  private show(): void {
    const folderNames = [...new Set(this.queries.map((query) => query.folder))].filter(Boolean);
    this.folders.replaceChildren(
      ...folderNames.map((folder) => h('option', { attrs: { value: folder } })),
    );
    const groups = groupedByFolder(this.queries);
    this.list.replaceChildren(
      ...groups.map(({ folder, queries }) =>
        h('section', { className: 'saved-folder', attrs: { 'data-folder': folder } }, [
          h('h3', { text: folder === '' ? 'No folder' : visibleName(folder) }),
          h(
            'ul',
            {},
            queries.map((query) => this.entry(query)),
          ),
        ]),
      ),
    );
    if (groups.length === 0) {
      this.list.append(h('p', { className: 'empty', text: 'No saved query yet' }));
    }
  }

  private entry(query: SavedQuery): HTMLElement {
    const item = h('li', { className: 'saved-query', attrs: { 'data-name': query.name } });
    item.append(
      h('div', { className: 'saved-query-name', text: visibleName(query.name) }),
      h('pre', {
        className: 'history-sql',
        text: query.sql.length > 2000 ? `${query.sql.slice(0, 2000)}…` : query.sql,
      }),
      h('div', { className: 'toolbar' }, [
        button('Open', () => this.actions.open(query.sql, false), { 'data-action': 'open' }),
        button('Run', () => this.actions.open(query.sql, true), { 'data-action': 'run' }),
        button('Link', () => this.actions.link(query.sql), { 'data-action': 'link' }),
        button('Rename', () => item.replaceWith(this.renameForm(query)), {
          'data-action': 'rename',
        }),
        button('Delete', () => this.delete(query), { 'data-action': 'delete' }),
      ]),
    );
    return item;
  }

  private delete(query: SavedQuery): void {
    if (this.keep(withoutQuery(this.queries, query))) this.say(`Deleted ${describe(query)}`);
  }

  /** The entry as a small form: its name and folder, editable. */
  private renameForm(query: SavedQuery): HTMLElement {
    const name = h('input', {
      attrs: { type: 'text', name: 'name', 'aria-label': 'New name', autocomplete: 'off' },
    });
    const folder = h('input', {
      attrs: { type: 'text', name: 'folder', 'aria-label': 'Folder', list: 'saved-folders' },
    });
    name.value = query.name;
    folder.value = query.folder;
    const form = h('form', { className: 'saved-query rename' }, [
      name,
      folder,
      h('button', { text: 'Rename', attrs: { type: 'submit', 'data-action': 'confirm-rename' } }),
      button('Cancel', () => this.show()),
    ]);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const renamed = renamedQuery(this.queries, query, { name: name.value, folder: folder.value });
      if ('refused' in renamed) this.say(renamed.refused);
      else if (this.keep(renamed.queries)) this.say(`Renamed ${describe(query)}`);
    });
    queueMicrotask(() => name.focus());
    return h('li', {}, [form]);
  }
}

function labelled(text: string, input: HTMLInputElement): HTMLElement {
  return h('label', { className: 'field', attrs: { for: input.id } }, [h('span', { text }), input]);
}
