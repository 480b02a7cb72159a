/**
 * The results of a run: a summary line (state, time, the transaction's outcome), then one tab per
 * statement with its grid, row count, time, a "truncated" banner when a limit cut the rows, its
 * error, and exports as CSV and JSON.
 */
import { jsonExport } from './cells';
import { download, h, tabList } from './dom';
import { ResultGrid } from './grid';
import { transactionOutcome, type RunResult, type StatementResult } from './results';

export interface ExportRequest {
  statement: StatementResult;
  format: 'csv' | 'json';
}

export class ResultsView {
  readonly element = h('section', { className: 'results', attrs: { 'aria-label': 'Results' } });
  private run: RunResult | undefined;
  private selected = 0;
  private grids = new Map<number, ResultGrid>();
  private tabs: ReturnType<typeof tabList> | undefined;
  private panel = h('div', { className: 'result-panel', attrs: { role: 'tabpanel' } });
  private summary = h('div', {
    className: 'summary',
    attrs: { role: 'status', 'data-testid': 'run-summary' },
  });
  private tabCount = -1;
  private shownShape = '';

  constructor(
    private readonly exportCsv: (statement: StatementResult) => Promise<void>,
    private readonly jsonRowMode: () => string,
  ) {
    this.element.append(this.summary, this.panel);
  }

  /** Starts showing a new run. */
  reset(): void {
    this.run = undefined;
    this.grids.clear();
    this.selected = 0;
    this.tabCount = -1;
    this.shownShape = '';
    this.tabs?.element.remove();
    this.tabs = undefined;
    this.panel.replaceChildren();
    this.summary.textContent = 'Running…';
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
    if (run.statements.length !== this.tabCount) this.buildTabs(run);
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
      h('button', {
        text: 'Download COPY data',
        attrs: { type: 'button' },
        on: { click: () => download(data, `copy.${extension}`) },
      }),
    );
  }

  private showSummary(run: RunResult): void {
    const { outcome } = run;
    const parts: string[] = [];
    if (outcome.state === 'running') parts.push('Running…');
    else if (outcome.state === 'succeeded') parts.push('Succeeded');
    else if (outcome.state === 'cancelled') parts.push('Cancelled');
    else if (outcome.state === 'cut') parts.push('Cut short');
    else parts.push('Failed');
    if (outcome.error) parts.push(errorLine(outcome.error));
    const transaction = transactionOutcome(outcome);
    if (transaction) parts.push(transaction);
    if (outcome.totalExecutionTime !== undefined) {
      parts.push(`${outcome.totalExecutionTime.toFixed(1)} ms in all`);
    }
    for (const warning of outcome.warnings ?? []) parts.push(`Warning: ${warning}`);
    this.summary.textContent = parts.join(' · ');
    this.summary.className = `summary ${outcome.state}`;
  }

  private buildTabs(run: RunResult): void {
    this.tabCount = run.statements.length;
    const tabs = run.statements.map((statement, position) => ({
      id: `statement-${position}`,
      title: `${statement.index + 1}. ${statement.command ?? firstWord(statement.text) ?? (statement.state === 'failed' ? 'Failed' : 'Statement')}`,
      className: statement.state === 'failed' ? 'failed' : '',
    }));
    const failed = run.statements.findIndex((statement) => statement.state === 'failed');
    if (run.outcome.state !== 'running' && failed >= 0) this.selected = failed;
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
    const shape = `${this.selected}:${statement.state}:${statement.truncated}:${statement.error?.message}`;
    if (shape !== this.shownShape) {
      this.panel.replaceChildren(...this.statementParts(statement, grid));
      this.shownShape = shape;
    } else {
      this.panel.querySelector('.statement-meta')?.replaceWith(this.meta(statement));
    }
    grid?.setRows(statement.rows);
  }

  private statementParts(statement: StatementResult, grid: ResultGrid | undefined): Node[] {
    const parts: (Node | false)[] = [
      statement.truncated === true && truncatedBanner(statement),
      statement.error !== undefined &&
        h('div', { className: 'statement-error', attrs: { role: 'alert' } }, [
          h('strong', { text: statement.error.code ? `${statement.error.code}: ` : '' }),
          statement.error.message,
          ...['detail', 'hint', 'where'].flatMap((name) => {
            const value = statement.error?.[name as 'detail' | 'hint' | 'where'];
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
    const parts: string[] = [];
    // A statement that failed before any output has no figures to show.
    if (
      statement.state === 'failed' &&
      statement.fields.length === 0 &&
      statement.command === undefined
    ) {
      return h('div', { className: 'statement-meta' });
    }
    if (statement.command) parts.push(statement.command);
    parts.push(
      statement.rowCount === null || statement.rowCount === undefined
        ? `${statement.rows.length} rows`
        : `rowCount ${statement.rowCount}`,
    );
    if (statement.rows.length > 0 || statement.fields.length > 0)
      parts.push(`${statement.rows.length} shown`);
    if (statement.executionTime !== undefined)
      parts.push(`${statement.executionTime.toFixed(2)} ms`);
    if (statement.cacheStatus) parts.push(`cache: ${statement.cacheStatus}`);
    if (statement.state === 'running') parts.push('receiving…');
    const exportable = statement.fields.length > 0 && statement.state !== 'running';
    return h('div', { className: 'statement-meta' }, [
      h('span', { text: parts.join(' · '), attrs: { 'data-testid': 'statement-meta' } }),
      exportable &&
        h('span', { className: 'exports' }, [
          h('button', {
            text: 'Export CSV',
            attrs: {
              type: 'button',
              title: 'Runs the statement again, read-only, and saves its rows as CSV',
            },
            on: { click: () => void this.exportCsv(statement) },
          }),
          h('button', {
            text: 'Export JSON',
            attrs: { type: 'button', title: 'Saves the rows shown as JSON' },
            on: { click: () => this.exportJson(statement) },
          }),
        ]),
    ]);
  }

  private exportJson(statement: StatementResult): void {
    const text = jsonExport(statement.fields, statement.rows, this.jsonRowMode());
    download(
      new Blob([text], { type: 'application/json' }),
      `statement-${statement.index + 1}.json`,
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

function truncatedBanner(statement: StatementResult): HTMLElement {
  const by =
    statement.truncatedBy === 'bytes'
      ? 'the result grew past the server’s byte limit (MAX_RESULT_BYTES)'
      : 'the statement returned more rows than maxRows';
  return h(
    'div',
    { className: 'truncated', attrs: { role: 'alert', 'data-testid': 'truncated' } },
    [`Truncated: only the first ${statement.rows.length} rows are shown; ${by}.`],
  );
}

function errorLine(error: {
  message: string;
  code?: string;
  location?: { line: number; column: number };
}): string {
  const place = error.location
    ? ` (line ${error.location.line}, column ${error.location.column})`
    : '';
  return `${error.code ? `${error.code}: ` : ''}${error.message}${place}`;
}

function firstWord(text: string): string | undefined {
  return /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase();
}
