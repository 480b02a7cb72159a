/**
 * PostgreSQL's own parser: libpg-query compiled to WebAssembly, its Emscripten module driven
 * directly (its entry point never makes a second instance). A WebAssembly memory never shrinks, so
 * statements over TREE_MAX_CHARACTERS are not parsed, and after a parse over RENEW_AFTER_CHARACTERS
 * or one that failed inside the parser the instance is replaced (docs/decisions.md 10.38).
 */
import { readFileSync } from 'node:fs';

/** Longer statements are not given to the parser: their tree is unknown. */
export const TREE_MAX_CHARACTERS = 64 * 1024;
/** After parsing a longer statement, the instance is replaced (what it touched stays resident). */
export const RENEW_AFTER_CHARACTERS = 16 * 1024;

/** What this file uses of the Emscripten module libpg-query builds. */
interface ParserInstance {
  HEAPU8: Uint8Array;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  _wasm_parse_query_raw(query: number): number;
  _wasm_free_parse_result(result: number): void;
  getValue(pointer: number, type: 'i32'): number;
  lengthBytesUTF8(text: string): number;
  stringToUTF8(text: string, pointer: number, maxBytes: number): void;
  UTF8ToString(pointer: number): string;
}

type CompiledModule = object;
type ParserFactory = (options: {
  instantiateWasm(imports: object, receive: (instance: object) => void): object;
  printErr(text: string): void;
}) => Promise<ParserInstance>;

/** The parts of the global WebAssembly API used here (@types/node 20 does not declare it). */
interface WebAssemblyApi {
  compile(bytes: Uint8Array): Promise<CompiledModule>;
  Instance: new (module: CompiledModule, imports: object) => object;
}
const { WebAssembly: webAssembly } = globalThis as unknown as { WebAssembly: WebAssemblyApi };

let compiled: Promise<CompiledModule> | null = null;
/** The instance that parses now; null before the first load and while one is being replaced. */
let current: ParserInstance | null = null;
/** The load under way or done: what `loadParser()` returns. */
let loading: Promise<void> | null = null;
/** Some instance was ready once: parsing may go on, with unknown trees while one is replaced. */
let loadedOnce = false;

/**
 * Loads PostgreSQL's parser (WebAssembly, about 1.8 MB). Call and await it once before `parseSql`;
 * further calls return the same promise, until the instance is replaced (then the promise of the
 * fresh one). `splitSql` does not need it.
 *
 * @example
 * await loadParser();
 * const statements = parseSql('SELECT 1; UPDATE t SET a = 1');
 */
export function loadParser(): Promise<void> {
  loading ??= startInstance();
  return loading;
}

/** True while an instance is ready: a caller may skip awaiting `loadParser()`. */
export function parserLoaded(): boolean {
  return current !== null;
}

/** Throws the error that tells the caller to load the parser first. */
export function assertParserLoaded(): void {
  if (!loadedOnce) {
    throw new Error(
      'The SQL parser is not loaded: await loadParser() once before calling parseSql() ' +
        '(splitSql() works without it).',
    );
  }
}

/** Bytes of the current instance's memory (0 while none is ready): what it can hold resident. */
export function parserMemoryBytes(): number {
  return current?.HEAPU8.length ?? 0;
}

/**
 * libpg-query's JSON tree of `sql` (`{version, stmts}`), or null when the grammar rejects it, when
 * it is longer than TREE_MAX_CHARACTERS, or while no instance is ready.
 */
export function parseWithPostgres(sql: string): unknown {
  const parser = current;
  if (parser === null || sql.length > TREE_MAX_CHARACTERS) return null;
  let tree: unknown = null;
  let failedInside = false;
  try {
    tree = parseOn(parser, sql);
  } catch {
    failedInside = true;
  }
  if (failedInside || sql.length > RENEW_AFTER_CHARACTERS) renew();
  return tree;
}

function parseOn(parser: ParserInstance, sql: string): unknown {
  const size = parser.lengthBytesUTF8(sql) + 1;
  const query = parser._malloc(size);
  if (query === 0) throw new Error('The parser could not allocate the statement');
  let result = 0;
  try {
    parser.stringToUTF8(sql, query, size);
    result = parser._wasm_parse_query_raw(query);
    if (result === 0) throw new Error('The parser could not allocate its result');
    // libpg_query's PgQueryParseResult: { char *parse_tree; char *stderr_buffer; PgQueryError *error }.
    if (parser.getValue(result + 8, 'i32') !== 0) return null;
    const tree = parser.getValue(result, 'i32');
    return tree === 0 ? null : (JSON.parse(parser.UTF8ToString(tree)) as unknown);
  } finally {
    parser._free(query);
    if (result !== 0) parser._wasm_free_parse_result(result);
  }
}

/** Retires the current instance (trees are unknown meanwhile) and loads a fresh one. */
function renew(): void {
  if (current === null) return;
  current = null;
  loading = startInstance();
}

function startInstance(): Promise<void> {
  const started = createInstance().then((instance) => {
    current = instance;
    loadedOnce = true;
  });
  // A failed load may be retried by calling loadParser() again.
  started.catch(() => {
    if (loading === started) loading = null;
  });
  return started;
}

async function createInstance(): Promise<ParserInstance> {
  compiled ??= compileParser();
  const module = await compiled;
  // Required here, not at the top: callers that only split statements never load the parser.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const factory = require('libpg-query/wasm/libpg-query.js') as ParserFactory;
  return factory({
    instantiateWasm: (imports, receive) => {
      receive(new webAssembly.Instance(module, imports));
      return {};
    },
    // An abort is reported to the caller as a failed parse; Emscripten would also print it.
    printErr: () => undefined,
  });
}

function compileParser(): Promise<CompiledModule> {
  const file = require.resolve('libpg-query/wasm/libpg-query.wasm');
  const compiling = webAssembly.compile(readFileSync(file));
  compiling.catch(() => {
    if (compiled === compiling) compiled = null;
  });
  return compiling;
}
