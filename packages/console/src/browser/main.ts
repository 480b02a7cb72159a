/**
 * The console page: views for the query (editor and results), the connection, the history, the
 * saved queries and the statistics, switched by a tab list; a schema browser beside the editor.
 * It talks to the sqlgate that served it, same origin.
 */
import { exportCsv, runQuery, type RunHandle } from './api';
import { formProblems, runProblems } from './connection-problems';
import { ConnectionView } from './connection-view';
import { button, download, h, tabList, toast } from './dom';
import { SqlEditor, type RunText } from './editor';
import { HistoryView } from './history-view';
import { requestTarget } from './inspect-requests';
import { unexplainable } from './plan';
import { PlanView } from './plan-view';
import {
  connectionLabel,
  credentialHeaders,
  FormError,
  queryBody,
  usesCache,
  type ConnectionForm,
} from './request-fields';
import {
  retryAfterText,
  runOfJsonAnswer,
  withRetryAfter,
  type RunResult,
  type StatementResult,
} from './results';
import type { RunRequest } from './export-plan';
import { ResultsView } from './results-view';
import { SchemaView } from './schema-view';
import { SavedView } from './saved-view';
import { ShareView, sqlOfPageLink } from './share-view';
import { StatsView } from './stats-view';
import { ConsoleStorage, type Theme } from './storage';

const EXAMPLE_SQL = `-- Ctrl+Enter (Cmd+Enter on a Mac) runs everything, or the selection when there is one.
SELECT version();
SELECT n, n * n AS square FROM generate_series(1, 10) AS n;
`;

const VIEWS = [
  { id: 'query', title: 'Query' },
  { id: 'connection', title: 'Connection' },
  { id: 'history', title: 'History' },
  { id: 'saved', title: 'Saved' },
  { id: 'stats', title: 'Statistics' },
];

const THEMES: Theme[] = ['system', 'light', 'dark'];

class ConsolePage {
  private readonly storage = new ConsoleStorage(localStorage);
  private readonly connectionName = h('span', {
    className: 'current-connection',
    attrs: { 'data-testid': 'current-connection' },
  });
  private readonly runButton = h('button', {
    className: 'primary',
    text: 'Run',
    attrs: { type: 'button', title: 'Ctrl+Enter / Cmd+Enter' },
  });
  private readonly cancelButton = h('button', {
    text: 'Cancel',
    attrs: { type: 'button', disabled: '' },
  });
  private readonly explainButton = h('button', {
    text: 'Explain',
    attrs: {
      type: 'button',
      title: 'The plan of the selection, or of the statement at the cursor',
    },
  });
  private readonly analyzeButton = h('button', {
    text: 'Explain analyze',
    attrs: { type: 'button', title: 'Runs the statement and shows its plan with actual figures' },
  });
  private readonly plan = new PlanView();
  private readonly schema: SchemaView;
  private readonly themeButton = h('button', { className: 'theme', attrs: { type: 'button' } });
  private readonly results: ResultsView;
  private readonly connection: ConnectionView;
  private readonly history: HistoryView;
  private readonly saved: SavedView;
  private readonly share = new ShareView(() => this.editor.textToRun().sql);
  /** Whether a run of this page reached the database; until then, a failed connect opens the form. */
  private connected = false;
  private readonly stats = new StatsView();
  private readonly editor: SqlEditor;
  private readonly views: ReturnType<typeof tabList>;
  private readonly panels = new Map<string, HTMLElement>();
  private running: RunHandle | undefined;

  constructor() {
    this.results = new ResultsView(
      (request, sql, statement, signal) => this.exportCsv(request, sql, statement, signal),
      () => this.connection.value().rowMode,
    );
    this.connection = new ConnectionView(this.storage, (form) => this.showConnection(form));
    this.history = new HistoryView(
      this.storage,
      (sql, run) => {
        this.editor.setText(sql);
        this.showView('query');
        if (run) void this.run();
      },
      () => connectionLabel(this.connection.value()),
    );
    this.saved = new SavedView(this.storage, {
      currentSql: () => this.editor.textToRun().sql,
      open: (sql, run) => this.openSql(sql, run),
      link: (sql) => void this.share.offer(sql),
    });
    const editorHost = h('div', { className: 'editor' });
    const linked = sqlOfPageLink();
    if (linked !== undefined) this.storage.saveSql(linked);
    this.editor = new SqlEditor({
      parent: editorHost,
      doc: linked ?? this.storage.sql() ?? EXAMPLE_SQL,
      run: () => void this.run(),
      onChange: (sql) => this.storage.saveSql(sql),
      styleNonce: styleNonce(),
    });
    this.schema = new SchemaView({
      target: () => requestTarget(this.connection.value(), this.connection.offered),
      insert: (text) => this.editor.insert(text),
      run: (sql) => {
        this.editor.appendAndSelect(sql);
        void this.run();
      },
      catalogChanged: (catalog) => this.editor.useCatalog(catalog),
    });
    this.explainButton.addEventListener('click', () => void this.explain(false));
    this.analyzeButton.addEventListener('click', () => void this.explain(true));
    this.runButton.addEventListener('click', () => void this.run());
    this.cancelButton.addEventListener('click', () => void this.cancel());
    this.themeButton.addEventListener('click', () => this.nextTheme());
    this.views = tabList('Views', VIEWS, (id) => this.showView(id));

    this.layOutPage(editorHost);
    this.applyTheme(this.storage.theme());
    this.showView('query');
    // A link pasted into the address bar of an open console changes the fragment only.
    window.addEventListener('hashchange', () => {
      const sql = sqlOfPageLink();
      if (sql !== undefined) this.openSql(sql, false);
    });
  }

  /** The page's parts in place: the header with its tabs, and one panel per view. */
  private layOutPage(editorHost: HTMLElement): void {
    const query = h('div', { className: 'query' }, [
      editorHost,
      h('div', { className: 'run-bar' }, [
        this.runButton,
        this.cancelButton,
        this.explainButton,
        this.analyzeButton,
        button(
          'Save…',
          () => {
            this.showView('saved');
            this.saved.focusName();
          },
          { 'data-action': 'save' },
        ),
        this.share.element,
        h('span', { className: 'hint', text: 'Ctrl+Enter runs everything, or the selection' }),
      ]),
      this.plan.element,
      this.results.element,
    ]);
    const contents: Record<string, HTMLElement> = {
      query: h('div', { className: 'query-layout' }, [this.schema.element, query]),
      connection: this.connection.element,
      history: this.history.element,
      saved: this.saved.element,
      stats: this.stats.element,
    };
    const main = h('main', {});
    for (const view of VIEWS) {
      const panel = h(
        'div',
        {
          className: 'view',
          attrs: { role: 'tabpanel', id: `panel-${view.id}`, 'aria-labelledby': `tab-${view.id}` },
        },
        [contents[view.id] as HTMLElement],
      );
      this.panels.set(view.id, panel);
      main.append(panel);
    }
    document.body.append(
      h('header', { className: 'app-header' }, [
        h('h1', { text: 'sqlgate' }),
        this.connectionName,
        this.views.element,
        this.themeButton,
      ]),
      main,
    );
  }

  private showView(id: string): void {
    this.views.setSelected(id);
    for (const [view, panel] of this.panels) panel.hidden = view !== id;
    if (id === 'stats') this.stats.show();
    else this.stats.hide();
  }

  /** Puts `sql` in the editor, shows it, and runs it when `run`. */
  private openSql(sql: string, run: boolean): void {
    this.editor.setText(sql);
    this.showView('query');
    if (run) void this.run();
  }

  private showConnection(form: ConnectionForm): void {
    this.connectionName.textContent = connectionLabel(form);
    this.connectionName.title = connectionLabel(form);
    // The history's "Run again" buttons name the connection they would use.
    this.history?.refresh();
    this.schema?.connectionChanged();
  }

  /** Shows the plan of the statement to explain (plan-view.ts). */
  private async explain(analyze: boolean): Promise<void> {
    const statement = this.editor.statementToExplain();
    if (statement === undefined) {
      this.plan.hide();
      toast('There is no statement to explain');
      return;
    }
    const title = analyze ? 'Explain analyze' : 'Explain';
    const refused = unexplainable(statement);
    if (refused) {
      this.plan.showError(title, refused);
      return;
    }
    const count = this.editor.statementsSelected();
    const note = count > 1 ? `Explained the first of ${count} statements selected` : undefined;
    let target: ReturnType<typeof requestTarget>;
    try {
      target = requestTarget(this.connection.value(), this.connection.offered);
    } catch (error) {
      if (!(error instanceof FormError)) throw error;
      this.showView('connection');
      this.connection.showError(error);
      return;
    }
    this.explainButton.disabled = this.analyzeButton.disabled = true;
    this.cancelButton.disabled = false;
    try {
      await this.plan.explain(target, statement, analyze, note);
    } finally {
      this.explainButton.disabled = this.analyzeButton.disabled = false;
      this.cancelButton.disabled = !this.running;
    }
  }

  private async run(): Promise<void> {
    if (this.running) return;
    const text = this.editor.textToRun();
    const form = this.connection.value();
    let body: Record<string, unknown>;
    let headers: Record<string, string>;
    try {
      body = queryBody(form, text.sql, this.connection.offered);
      headers = credentialHeaders(form);
    } catch (error) {
      if (!(error instanceof FormError)) throw error;
      this.showView('connection');
      const problems = formProblems(form, this.connection.offered);
      if (problems) this.connection.showProblems(problems.fields, problems.message);
      else this.connection.showError(error);
      return;
    }
    this.connection.clearStatus();
    this.editor.clearErrors();
    this.plan.hide();
    this.results.reset({ body, headers, sql: text.sql });
    const started = performance.now();
    const handle = runQuery({
      body,
      headers,
      stream: !usesCache(form),
      onProgress: (run) => this.results.show(run),
    });
    this.running = handle;
    this.setRunning(true);
    let run: RunResult;
    try {
      run = await handle.done;
    } finally {
      this.running = undefined;
      this.setRunning(false);
    }
    this.results.show(run);
    this.markError(run, text);
    this.schema.afterRun(text.sql);
    this.showConnectionProblems(run, form);
    this.history.add({
      at: new Date().toISOString(),
      sql: text.sql,
      connection: connectionLabel(form),
      outcome: run.outcome.state,
      statements: run.statements.length,
      durationMs: Math.round(performance.now() - started),
    });
  }

  /**
   * Until a run of this page has reached the database, a run that failed for want of usable
   * connection settings opens the form with those fields marked.
   */
  private showConnectionProblems(run: RunResult, form: ConnectionForm): void {
    if (run.statements.length > 0 || run.outcome.state === 'succeeded') this.connected = true;
    const problems = this.connected ? undefined : runProblems(run, form);
    if (!problems) return;
    this.showView('connection');
    this.connection.showProblems(problems.fields, problems.message);
  }

  /** Marks the error in the editor, and shows its place as the editor counts it (the whole text). */
  private markError(run: RunResult, text: RunText): void {
    const error = run.outcome.error;
    if (!error?.location) return;
    error.location = this.editor.markError(text, error.location, error.message);
    this.results.show(run);
  }

  /** Cancel stops the run under way, or the plan being made. */
  private async cancel(): Promise<void> {
    this.cancelButton.disabled = true;
    await Promise.all([this.running?.cancel(), this.plan.cancel()]);
  }

  private setRunning(running: boolean): void {
    this.runButton.disabled = running;
    this.cancelButton.disabled = !running && !this.plan.isRunning();
    document.body.classList.toggle('is-running', running);
  }

  /** Runs `sql` again through the CSV stream, read-only, with the settings of the run it came from. */
  private async exportCsv(
    request: RunRequest,
    sql: string,
    statement: StatementResult,
    signal: AbortSignal,
  ): Promise<void> {
    try {
      const answer = await exportCsv({ ...request.body, sql }, request.headers, signal);
      if (answer instanceof Blob) {
        download(answer, `statement-${statement.index + 1}.csv`);
        return;
      }
      const failed = withRetryAfter(
        runOfJsonAnswer(answer.status, answer.body),
        answer.retryAfter ?? null,
      );
      const error = failed.outcome.error;
      const wait =
        error?.retryAfterSeconds === undefined
          ? ''
          : ` (${retryAfterText(error.retryAfterSeconds)})`;
      toast(`Export failed: ${error?.message ?? `HTTP ${answer.status}`}${wait}`);
    } catch (error) {
      toast(
        signal.aborted ? 'Export stopped' : `Export failed: the answer was cut (${String(error)})`,
      );
    }
  }

  private applyTheme(theme: Theme): void {
    if (theme === 'system') delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = theme;
    this.themeButton.textContent = `Theme: ${theme}`;
    this.themeButton.setAttribute('aria-label', `Theme: ${theme} (change)`);
  }

  private nextTheme(): void {
    const next = THEMES[(THEMES.indexOf(this.storage.theme()) + 1) % THEMES.length] as Theme;
    this.storage.saveTheme(next);
    this.applyTheme(next);
  }
}

/** The nonce of this response's style elements, which the server put on the stylesheet link. */
function styleNonce(): string {
  return document.querySelector<HTMLLinkElement>('link[rel="stylesheet"][nonce]')?.nonce ?? '';
}

new ConsolePage();
