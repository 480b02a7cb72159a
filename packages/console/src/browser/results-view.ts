/**
 * The results of a run: a summary line (state, time, the transaction's outcome), then one tab per
 * statement with its grid, row count, time, a "truncated" banner when a limit cut the rows, its
 * error, and exports as CSV and JSON.
 */
import { duplicateNames, jsonExport } from './cells';
import { button, download, h, tabList, toast } from './dom';
import { ResultGrid } from './grid';
import { csvExportOf, type RunRequest } from './export-plan';
import { statementToShow } from './statement-choice';
import {
  MAX_KEPT_ROW_CHARACTERS,
  retryAfterText,
  transactionOutcome,
  type ErrorInfo,
  type RunResult,
  type StatementResult,
} from './results';

export class ResultsView {
  readonly element = h('section', { className: 'results', attrs: { 'aria-label': 'Results' } });
  private run: RunResult | undefined;
  private request: RunRequest = { body: {}, headers: {}, sql: '' };
  private selected = 0;
  private grids = new Map<number, ResultGrid>();
  private tabs: ReturnType<typeof tabList> | undefined;
  private panel = h('div', { className: 'result-panel', attrs: { role: 'tabpanel' } });
  private summary = h('div', {
    className: 'summary',
    attrs: { role: 'status', 'data-testid': 'run-summary' },
  });
  private tabCount = -1;
  /** Whether the tabs were drawn for the run's end (their marks, and the statement shown first). */
  private endShown = false;
  private shownShape = '';
  /** The CSV export under way, if any: one at a time, stopped by its button or a new run. */
  private exporting: AbortController | undefined;

  constructor(
    private readonly exportCsv: (
      request: RunRequest,
      sql: string,
      statement: StatementResult,
      signal: AbortSignal,
    ) => Promise<void>,
    private readonly jsonRowMode: () => string,
  ) {
    this.element.append(this.summary, this.panel);
  }

  /** Starts showing a new run of `request`. */
  reset(request: RunRequest): void {
    this.exporting?.abort();
    this.run = undefined;
    this.request = request;
    this.grids.clear();
    this.selected = 0;
    this.tabCount = -1;
    this.endShown = false;
    this.shownShape = '';
    this.tabs?.element.remove();
    this.tabs = undefined;
    this.panel.replaceChildren();
    this.summary.replaceChildren('Running…');
    this.summary.className = 'summary running';
  }

  /** Shows the run as it stands; called as rows arrive and once at the end. */
  show(run: RunResult): void {
    this.run = run;
    this.showSummary(run);
    if (run.copyData) {
      this.showCopyData(run.copyData);
      return;
    }
    const ended = run.outcome.state !== 'running';
    if (run.statements.length !== this.tabCount || (ended && !this.endShown)) this.buildTabs(run);
    this.showStatement();
  }

  private showCopyData(data: Blob): void {
    const extension = data.type.startsWith('text/csv')
      ? 'csv'
      : data.type.startsWith('text/')
        ? 'txt'
        : 'bin';
    this.panel.replaceChildren(
      h('p', {
        text: `COPY … TO STDOUT answered with its data: ${data.size} bytes (${data.type || 'no type'}).`,
      }),
      button('Download COPY data', () => download(data, `copy.${extension}`)),
    );
  }

  /** The summary, each part in its own isolated span: a server's text cannot reorder the rest. */
  private showSummary(run: RunResult): void {
    const { outcome } = run;
    const parts: string[] = [STATE_WORDS[outcome.state]];
    if (outcome.error) parts.push(...errorParts(outcome.error));
    const transaction = transactionOutcome(outcome);
    if (transaction) parts.push(transaction);
    if (outcome.totalExecutionTime !== undefined) {
      parts.push(`${outcome.totalExecutionTime.toFixed(1)} ms in all`);
    }
    for (const warning of outcome.warnings ?? []) parts.push(`Warning: ${warning}`);
    this.summary.replaceChildren(
      ...parts.flatMap((part, index) => [index > 0 ? ' · ' : '', h('span', { text: part })]),
    );
    this.summary.className = `summary ${outcome.state}`;
  }

  private buildTabs(run: RunResult): void {
    this.tabCount = run.statements.length;
    const tabs = run.statements.map((statement, position) => ({
      id: `statement-${position}`,
      title: `${statement.index + 1}. ${statement.command ?? firstWord(statement.text) ?? (statement.state === 'failed' ? 'Failed' : 'Statement')}`,
      className:
        statement.state === 'failed' || statement.state === 'cancelled' ? statement.state : '',
    }));
    // Once, when the run ends: later redraws keep the tab the user chose.
    if (run.outcome.state !== 'running' && !this.endShown) {
      this.selected = statementToShow(run);
      this.endShown = true;
    }
    const list = tabList('Statements', tabs, (id) => {
      this.selected = Number(id.slice('statement-'.length));
      this.showStatement();
    });
    this.tabs?.element.remove();
    this.tabs = list;
    if (tabs.length > 0) this.element.insertBefore(list.element, this.panel);
  }

  private showStatement(): void {
    const statement = this.run?.statements[this.selected];
    this.tabs?.setSelected(`statement-${this.selected}`);
    if (!statement) {
      this.panel.replaceChildren();
      return;
    }
    this.panel.setAttribute('aria-labelledby', `tab-statement-${this.selected}`);
    this.panel.id = `panel-statement-${this.selected}`;
    const grid = this.gridOf(statement);
    // The panel is rebuilt when what it shows changes shape; while rows stream in, only the line of
    // figures changes (and the grid, which keeps its scroll position).
    const shape = `${this.selected}:${statement.state}:${statement.truncated}:${statement.droppedByConsole}:${statement.error?.message}`;
    if (shape !== this.shownShape) {
      this.panel.replaceChildren(...this.statementParts(statement, grid));
      this.shownShape = shape;
    } else {
      this.panel.querySelector('.statement-meta')?.replaceWith(this.meta(statement));
    }
    grid?.setRows(statement.rows);
  }

  private statementParts(statement: StatementResult, grid: ResultGrid | undefined): Node[] {
    const { error } = statement;
    const parts: (Node | false)[] = [
      (statement.truncated === true || statement.droppedByConsole === true) &&
        this.truncatedBanner(statement),
      statement.state === 'cancelled' && cancelledNote(statement),
      error !== undefined &&
        statement.state !== 'cancelled' &&
        h('div', { className: 'statement-error', attrs: { role: 'alert' } }, [
          h('strong', { text: error.code ? `${error.code}: ` : '' }),
          h('span', { text: error.message }),
          ...(['detail', 'hint', 'where'] as const).flatMap((name) => {
            const value = error[name];
            return value ? [h('div', { className: 'error-extra', text: `${name}: ${value}` })] : [];
          }),
        ]),
      h('pre', { className: 'statement-text', text: statement.text }),
      this.meta(statement),
      grid?.element ?? false,
    ];
    return parts.filter((part): part is Node => part !== false);
  }

  private meta(statement: StatementResult): HTMLElement {
    // A statement that failed before any output has no figures to show.
    if (
      (statement.state === 'failed' || statement.state === 'cancelled') &&
      statement.fields.length === 0 &&
      statement.command === undefined
    ) {
      return h('div', { className: 'statement-meta' });
    }
    const parts: string[] = [];
    if (statement.command) parts.push(statement.command);
    parts.push(
      statement.rowCount === null || statement.rowCount === undefined
        ? `${statement.rows.length} rows`
        : `rowCount ${statement.rowCount}`,
    );
    if (statement.rows.length > 0 || statement.fields.length > 0) {
      parts.push(`${statement.rows.length} shown`);
    }
    if (statement.executionTime !== undefined)
      parts.push(`${statement.executionTime.toFixed(2)} ms`);
    if (statement.cacheStatus) parts.push(`cache: ${statement.cacheStatus}`);
    if (statement.state === 'running') parts.push('receiving…');
    if (statement.state === 'incomplete')
      parts.push('the answer stopped before this statement ended');
    // A cancelled statement's rows are partial: nothing to export.
    const hasRows =
      statement.fields.length > 0 &&
      statement.state !== 'running' &&
      statement.state !== 'cancelled';
    return h('div', { className: 'statement-meta' }, [
      h('span', { text: parts.join(' · '), attrs: { 'data-testid': 'statement-meta' } }),
      hasRows &&
        h('span', { className: 'exports' }, [
          h('button', {
            text: this.exporting ? 'Stop export' : 'Export CSV',
            attrs: {
              type: 'button',
              'data-action': 'export-csv',
              title:
                'Runs the statement again, read-only, with the settings of this run, and saves its rows as CSV',
            },
            on: { click: () => void this.exportStatementCsv(statement) },
          }),
          button('Export JSON', () => this.exportJson(statement), {
            title: 'Saves the rows shown as JSON',
          }),
        ]),
    ]);
  }

  private async exportStatementCsv(statement: StatementResult): Promise<void> {
    if (this.exporting) {
      this.exporting.abort();
      return;
    }
    if (!this.run) return;
    const plan = csvExportOf(this.run, this.request, statement);
    if ('refused' in plan) {
      toast(plan.refused);
      return;
    }
    const exporting = new AbortController();
    this.exporting = exporting;
    this.refreshMeta();
    try {
      await this.exportCsv(this.request, plan.sql, statement, exporting.signal);
    } finally {
      if (this.exporting === exporting) this.exporting = undefined;
      this.refreshMeta();
    }
  }

  /** Redraws the line of figures and buttons of the statement shown. */
  private refreshMeta(): void {
    const statement = this.run?.statements[this.selected];
    if (statement) this.panel.querySelector('.statement-meta')?.replaceWith(this.meta(statement));
  }

  private exportJson(statement: StatementResult): void {
    const rowMode = this.jsonRowMode();
    const repeated = rowMode === 'array' ? [] : duplicateNames(statement.fields);
    if (repeated.length > 0) {
      toast(
        `Columns named ${repeated.join(', ')} appear more than once: in rows as objects only the last ` +
          'of each is kept. Choose "array" for "JSON export rows as" to keep every column.',
      );
    }
    const text = jsonExport(statement.fields, statement.rows, rowMode);
    download(
      new Blob([text], { type: 'application/json' }),
      `statement-${statement.index + 1}.json`,
    );
  }

  private truncatedBanner(statement: StatementResult): HTMLElement {
    if (statement.droppedByConsole) {
      return h(
        'div',
        { className: 'truncated', attrs: { role: 'alert', 'data-testid': 'truncated' } },
        [
          `Truncated by the console: it keeps about ${MAX_KEPT_ROW_CHARACTERS / 1_000_000} million characters of rows per run, and ${statement.rows.length} rows are shown. Export CSV for every row.`,
        ],
      );
    }
    const text =
      statement.truncatedBy !== 'bytes'
        ? `Truncated: only the first ${statement.rows.length} rows are shown; the statement returned more rows than maxRows.`
        : this.run?.streamed
          ? `Truncated: a row larger than the server’s byte limit (MAX_RESULT_BYTES) was left out; ${statement.rows.length} rows are shown.`
          : `Truncated: the result grew past the server’s byte limit (MAX_RESULT_BYTES); only the first ${statement.rows.length} rows are shown.`;
    return h(
      'div',
      { className: 'truncated', attrs: { role: 'alert', 'data-testid': 'truncated' } },
      [text],
    );
  }

  private gridOf(statement: StatementResult): ResultGrid | undefined {
    if (statement.fields.length === 0) return undefined;
    let grid = this.grids.get(statement.index);
    if (!grid) {
      grid = new ResultGrid(statement.fields, `Rows of statement ${statement.index + 1}`);
      this.grids.set(statement.index, grid);
    }
    return grid;
  }
}

const STATE_WORDS: Record<RunResult['outcome']['state'], string> = {
  running: 'Running…',
  succeeded: 'Succeeded',
  failed: 'Failed',
  cancelled: 'Cancelled',
  cut: 'Cut short',
};

/**
 * An error as summary parts: sqlgate's sentence, PostgreSQL's message, and the console's own note
 * of its place (a part of its own, so the message's text direction cannot carry it along).
 */
function errorParts(error: ErrorInfo): string[] {
  const parts = error.context ? [error.context] : [];
  parts.push(`${error.code ? `${error.code}: ` : ''}${error.message}`);
  const mentionsPlace = /line \d+, column \d+/.test(error.message);
  if (error.location && !mentionsPlace) {
    parts.push(`line ${error.location.line}, column ${error.location.column}`);
  }
  if (error.retryAfterSeconds !== undefined) parts.push(retryAfterText(error.retryAfterSeconds));
  return parts;
}

/** A cancelled statement's note: neutral, since stopping it was what the user asked for. */
function cancelledNote(statement: StatementResult): HTMLElement {
  const { error } = statement;
  return h(
    'div',
    {
      className: 'statement-cancelled',
      attrs: { role: 'status', 'data-testid': 'statement-cancelled' },
    },
    [
      h('strong', { text: 'Cancelled' }),
      error ? h('span', { text: ` · ${error.code ? `${error.code}: ` : ''}${error.message}` }) : '',
    ],
  );
}

function firstWord(text: string): string | undefined {
  return /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase();
}
