/**
 * The SQL editor: CodeMirror 6 with the PostgreSQL dialect. Ctrl/Cmd+Enter runs the selection when
 * there is one, else the whole text; an error's `location` gets a marker and is scrolled into view.
 */
import { closeCompletion } from '@codemirror/autocomplete';
import { lintGutter, setDiagnostics } from '@codemirror/lint';
import { Compartment, EditorSelection, Prec } from '@codemirror/state';
import { EditorView, keymap } from '@codemirror/view';
import { classHighlighter } from '@lezer/highlight';
import { syntaxHighlighting } from '@codemirror/language';
import { basicSetup } from 'codemirror';
import type { Catalog } from './catalog';
import { offsetOfLocation, type TextLocation } from './location';
import { sqlLanguage } from './schema-completion';
import { statementAt, statementsSelected } from './sql-text';

/** The text a run sends, and where it starts in the document (to place its errors). */
export interface RunText {
  sql: string;
  from: number;
}

export interface SqlEditorOptions {
  /** The element the editor is made in. */
  parent: HTMLElement;
  /** The text it opens with. */
  doc: string;
  /** Ctrl/Cmd+Enter. */
  run: () => void;
  /** Called with the whole text after each change. */
  onChange: (doc: string) => void;
  /** The page's style nonce, which admits the editor's style elements. */
  styleNonce: string;
}

export class SqlEditor {
  readonly view: EditorView;
  /** The SQL language, reconfigured when a catalog's names arrive for the completion. */
  private readonly language = new Compartment();

  constructor({ parent, doc, run, onChange, styleNonce }: SqlEditorOptions) {
    this.view = new EditorView({
      parent,
      doc,
      extensions: [
        // The editor writes its styles into style elements; the page's policy admits them by nonce.
        EditorView.cspNonce.of(styleNonce),
        basicSetup,
        this.language.of(sqlLanguage()),
        syntaxHighlighting(classHighlighter),
        // Long lines wrap: the console must stay readable 390 px wide.
        EditorView.lineWrapping,
        lintGutter(),
        Prec.highest(
          keymap.of([
            {
              key: 'Mod-Enter',
              run: () => {
                run();
                return true;
              },
            },
          ]),
        ),
        EditorView.contentAttributes.of({ 'aria-label': 'SQL editor' }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) onChange(update.state.doc.toString());
        }),
      ],
    });
  }

  /** The selection when there is one, else the whole text. */
  textToRun(): RunText {
    const { state } = this.view;
    const range = state.selection.main;
    if (!range.empty) return { sql: state.sliceDoc(range.from, range.to), from: range.from };
    return { sql: state.doc.toString(), from: 0 };
  }

  /** The statement to explain: the selection, else the one under the cursor, else the only one. */
  statementToExplain(): string | undefined {
    const { state } = this.view;
    const range = state.selection.main;
    return statementAt(state.doc.toString(), range.from, range.to);
  }

  /** How many statements the selection holds (1 without one): Explain says it took the first. */
  statementsSelected(): number {
    const { state } = this.view;
    const range = state.selection.main;
    return statementsSelected(state.doc.toString(), range.from, range.to);
  }

  /** Completes the names of `catalog` from now on (none: keywords only). */
  useCatalog(catalog: Catalog | undefined): void {
    this.view.dispatch({ effects: this.language.reconfigure(sqlLanguage(catalog)) });
  }

  /** Puts `text` in place of the selection (at the cursor) and gives the editor the focus. */
  insert(text: string): void {
    this.view.dispatch(this.view.state.replaceSelection(text), { scrollIntoView: true });
    this.view.focus();
  }

  /** Adds `text` on a line of its own at the end and selects it, so a run runs only it. */
  appendAndSelect(text: string): void {
    const { doc } = this.view.state;
    const prefix = doc.length === 0 || doc.sliceString(doc.length - 1) === '\n' ? '' : '\n';
    const from = doc.length + prefix.length;
    this.view.dispatch({
      changes: { from: doc.length, insert: prefix + text },
      selection: EditorSelection.range(from, from + text.length),
      scrollIntoView: true,
    });
  }

  setText(text: string): void {
    this.view.dispatch({ changes: { from: 0, to: this.view.state.doc.length, insert: text } });
  }

  /**
   * Marks the error at `location` of the text that ran, puts the cursor there and scrolls to it.
   * Answers the place in the whole document (1-based line, and column in characters of that line).
   */
  markError(run: RunText, location: TextLocation, message: string): TextLocation {
    const { state } = this.view;
    const from = Math.min(run.from + offsetOfLocation(run.sql, location), state.doc.length);
    const word = state.wordAt(from);
    // The word the error starts, else one character (two UTF-16 units outside the BMP).
    const character = state.sliceDoc(from, from + 2).codePointAt(0);
    const characterLength = character === undefined ? 0 : character > 0xffff ? 2 : 1;
    const to =
      word && word.from === from
        ? word.to
        : Math.min(from + characterLength, state.doc.lineAt(from).to);
    this.view.dispatch(setDiagnostics(state, [{ from, to, severity: 'error', message }]), {
      selection: EditorSelection.cursor(from),
      effects: EditorView.scrollIntoView(from, { y: 'center' }),
    });
    const line = state.doc.lineAt(from);
    return { line: line.number, column: [...state.sliceDoc(line.from, from)].length + 1 };
  }

  /** Clears the last run's markers, and closes a completion list left open. */
  clearErrors(): void {
    closeCompletion(this.view);
    this.view.dispatch(setDiagnostics(this.view.state, []));
  }

  focus(): void {
    this.view.focus();
  }
}
