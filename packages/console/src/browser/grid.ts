/**
 * A virtualised result grid: only the rows in view (and a few around them) exist in the DOM, so a
 * result of 100,000 rows scrolls as smoothly as one of ten. Rows have one fixed height; the body is
 * as tall as all rows would be, and the rows in view are placed inside it.
 */
import { cellText } from './cells';
import { h } from './dom';
import type { Cell, Field } from './results';

const ROW_HEIGHT = 26;
const OVERSCAN = 10;
const SAMPLE_ROWS = 200;
const MIN_WIDTH_CH = 4;
const MAX_WIDTH_CH = 48;
const SHOWN_CHARACTERS = 1000;
/** The horizontal padding of a cell, as console.css sets it. */
const CELL_PADDING_PX = 8;

export class ResultGrid {
  readonly element: HTMLElement;
  private readonly viewport: HTMLElement;
  private readonly body: HTMLElement;
  private readonly rowsLayer: HTMLElement;
  private rows: readonly Cell[][] = [];
  private widths: string[] = [];
  private rendered = { first: -1, last: -1, count: -1 };
  /** Rows the column widths were measured on (the first SAMPLE_ROWS at most). */
  private measuredRows = 0;
  private frame = 0;

  constructor(
    private readonly fields: readonly Field[],
    label: string,
  ) {
    this.rowsLayer = h('div', { className: 'grid-rows', attrs: { role: 'rowgroup' } });
    this.body = h('div', { className: 'grid-body' }, [this.rowsLayer]);
    const header = h('div', { className: 'grid-row grid-header', attrs: { role: 'row' } });
    this.viewport = h(
      'div',
      {
        className: 'grid-viewport',
        // The viewport scrolls with the arrow keys once focused.
        attrs: {
          tabindex: '0',
          role: 'grid',
          'aria-label': label,
          'aria-colcount': String(fields.length + 1),
        },
      },
      [header, this.body],
    );
    this.element = h('div', { className: 'grid' }, [this.viewport]);
    this.viewport.addEventListener('scroll', () => this.schedule(), { passive: true });
    new ResizeObserver(() => this.schedule()).observe(this.viewport);
    this.widths = fields.map((field) => cssWidth(widthOf([field.name, field.dataTypeName ?? ''])));
    this.renderHeader(header);
  }

  /** Shows `rows` (the same array may have grown since the last call). */
  setRows(rows: readonly Cell[][]): void {
    this.rows = rows;
    if (this.measuredRows < SAMPLE_ROWS && rows.length > this.measuredRows) this.fitColumns();
    this.viewport.setAttribute('aria-rowcount', String(rows.length + 1));
    this.body.style.height = `${rows.length * ROW_HEIGHT}px`;
    this.schedule();
  }

  private renderHeader(header: HTMLElement): void {
    header.append(
      h('div', { className: 'grid-cell grid-rownum', attrs: { role: 'columnheader' }, text: '#' }),
    );
    this.fields.forEach((field) => {
      const cell = h(
        'div',
        { className: 'grid-cell', attrs: { role: 'columnheader', title: field.name } },
        [
          h('span', { className: 'column-name', text: field.name }),
          h('span', { className: 'column-type', text: field.dataTypeName ?? '' }),
        ],
      );
      header.append(cell);
    });
    this.applyWidths(header);
  }

  /** Columns as wide as their longest value among the first rows, within bounds. */
  private fitColumns(): void {
    const sample = this.rows.slice(0, SAMPLE_ROWS);
    this.measuredRows = sample.length;
    this.widths = this.fields.map((field, column) =>
      cssWidth(
        widthOf([
          field.name,
          field.dataTypeName ?? '',
          ...sample.map((row) => cellText(row[column] ?? null) ?? 'NULL'),
        ]),
      ),
    );
    this.applyWidths(this.viewport.querySelector('.grid-header') as HTMLElement);
    this.rendered.first = -1;
  }

  private applyWidths(row: HTMLElement): void {
    const cells = row.children;
    this.widths.forEach((width, column) => {
      (cells[column + 1] as HTMLElement | undefined)?.style.setProperty('width', width);
    });
  }

  private schedule(): void {
    if (this.frame !== 0) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  private render(): void {
    const top = this.viewport.scrollTop;
    const height = this.viewport.clientHeight || 400;
    const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(this.rows.length, Math.ceil((top + height) / ROW_HEIGHT) + OVERSCAN);
    const { rendered } = this;
    if (rendered.first === first && rendered.last === last && rendered.count === this.rows.length) {
      return;
    }
    this.rendered = { first, last, count: this.rows.length };
    const fragment = document.createDocumentFragment();
    for (let index = first; index < last; index++) {
      fragment.append(this.rowElement(index));
    }
    this.rowsLayer.style.transform = `translateY(${first * ROW_HEIGHT}px)`;
    this.rowsLayer.replaceChildren(fragment);
  }

  private rowElement(index: number): HTMLElement {
    const row = this.rows[index] ?? [];
    const element = h('div', {
      className: 'grid-row',
      attrs: { role: 'row', 'aria-rowindex': String(index + 2) },
    });
    element.append(h('div', { className: 'grid-cell grid-rownum', text: String(index + 1) }));
    this.fields.forEach((_field, column) => {
      const value = cellText(row[column] ?? null);
      // A cell shows the start of a long value (the whole of it is in the exports): a text node of
      // megabytes would stall the page at every scroll.
      const text =
        value !== null && value.length > SHOWN_CHARACTERS
          ? `${value.slice(0, SHOWN_CHARACTERS)}…`
          : value;
      const cell =
        text === null
          ? h('div', {
              className: 'grid-cell null',
              attrs: { role: 'gridcell', 'data-null': '' },
              text: 'NULL',
            })
          : h('div', { className: 'grid-cell', attrs: { role: 'gridcell' }, text });
      // Every value can be read whole, whatever its column's width (the first 2,000 characters).
      if (text !== null && text !== '') cell.title = value?.slice(0, 2000) ?? '';
      element.append(cell);
    });
    this.applyWidths(element);
    return element;
  }
}

/** Characters a column shows: its longest text among those measured, within bounds. */
function widthOf(texts: string[]): number {
  const longest = texts.reduce((max, text) => Math.max(max, text.length), 0);
  return Math.min(MAX_WIDTH_CH, Math.max(MIN_WIDTH_CH, longest + 1));
}

/** A CSS width for `characters` of the grid's monospace font, plus the cell's padding and border. */
function cssWidth(characters: number): string {
  return `calc(${characters}ch + ${CELL_PADDING_PX * 2 + 1}px)`;
}
