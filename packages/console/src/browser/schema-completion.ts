/**
 * The editor's SQL language with the catalog's names to complete (catalog-completion.ts): lang-sql's
 * own schema completion over the nested namespace, with `defaultSchema` so that schema's names
 * complete unqualified, plus one source for the names of the other schemas, applied qualified.
 */
import type { CompletionSource } from '@codemirror/autocomplete';
import { PostgreSQL, sql, type SQLNamespace } from '@codemirror/lang-sql';
import type { Extension } from '@codemirror/state';
import type { Catalog } from './catalog';
import { catalogNamespace, elsewhereCompletions, type NameCompletion } from './catalog-completion';

const WORD = /^[\w$]*$/;

/** Offers `options` for a bare word: not after `.` (lang-sql completes that) nor in quotes. */
function bareWordSource(options: NameCompletion[]): CompletionSource {
  return (context) => {
    const word = context.matchBefore(/[\w$]*$/);
    if (!word || (word.from === word.to && !context.explicit)) return null;
    const before = context.state.sliceDoc(word.from - 1, word.from);
    if (before === '.' || before === '"') return null;
    return { from: word.from, options, validFor: WORD };
  };
}

/** PostgreSQL's SQL support, completing the catalog's names when there is one. */
export function sqlLanguage(catalog?: Catalog): Extension {
  if (!catalog) return sql({ dialect: PostgreSQL, upperCaseKeywords: true });
  return [
    sql({
      dialect: PostgreSQL,
      upperCaseKeywords: true,
      schema: catalogNamespace(catalog) as SQLNamespace,
      defaultSchema: catalog.defaultSchema,
    }),
    PostgreSQL.language.data.of({ autocomplete: bareWordSource(elsewhereCompletions(catalog)) }),
  ];
}
