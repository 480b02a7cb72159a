/**
 * Type names and parsers for one pool. Built-in types come from a static table; custom types
 * (enums, composites, domains, ranges, their arrays) are looked up once in pg_type and remembered.
 * Every parser handed out is wrapped once so that it never throws (docs/decisions.md 10.3).
 */
import { parseRawJson } from '@sqlgate/core';
import { BUILTIN_TYPE_NAMES } from './builtin-types';
import {
  arrayParser,
  asText,
  builtinDelimiter,
  builtinValueParser,
  type ValueParser,
} from './value-parsers';

export interface CustomType {
  name: string;
  /**
   * Element type OID when the type is an array, else 0. For an array of a domain, the domain's
   * base type (CUSTOM_TYPES_SQL resolves it): elements follow the base type's rule.
   */
  elementOid: number;
  /** The element type's pg_type.typdelim; a comma when absent (box, the built-in exception, is known). */
  delimiter?: string;
}

/**
 * Name, element (a domain resolved to its base type, through domains over domains) and the
 * element's delimiter of each OID.
 */
export const CUSTOM_TYPES_SQL = `SELECT t.oid::int4 AS oid, t.typname AS name,
  CASE WHEN t.typcategory = 'A' AND t.typelem <> 0 THEN (
    WITH RECURSIVE chain(oid, base, depth) AS (
      SELECT e.oid, e.typbasetype, 0 FROM pg_catalog.pg_type e WHERE e.oid = t.typelem
      UNION ALL
      SELECT d.oid, d.typbasetype, c.depth + 1 FROM chain c JOIN pg_catalog.pg_type d ON d.oid = c.base
      WHERE c.depth < 32)
    SELECT oid::int4 FROM chain WHERE base = 0 LIMIT 1) ELSE 0 END AS element,
  COALESCE((SELECT e.typdelim::text FROM pg_catalog.pg_type e WHERE e.oid = t.typelem), ',') AS delimiter
FROM pg_catalog.pg_type t WHERE t.oid = ANY($1::oid[])`;

/** Returns the text when `parse` throws: a value its rule cannot convert is PostgreSQL's text. */
function neverThrows(parse: ValueParser): ValueParser {
  if (parse === asText) return parse;
  return (text) => {
    try {
      return parse(text);
    } catch {
      return text;
    }
  };
}

/**
 * `parse` with every RawJson it makes replaced by its parsed value, for library callers that did
 * not ask for raw JSON text (docs/decisions.md 10.13).
 */
function parsingJson(parse: ValueParser): ValueParser {
  if (parse === asText) return parse;
  return (text) => parseRawJson(parse(text));
}

export class TypeRegistry {
  private readonly custom = new Map<number, CustomType>();
  /** Wrapped parsers by OID, so each is wrapped once and not per statement. */
  private readonly handedOut = new Map<number, ValueParser>();

  /**
   * @param rawJson json values as RawJson, PostgreSQL's own text (the HTTP app); false: parsed,
   * which loses big numbers, trailing zeros and duplicate keys.
   */
  constructor(private readonly rawJson = true) {}

  /**
   * The parser for a type known now, guaranteed not to throw; custom types parse as text until
   * `remember` learned them.
   */
  parserFor(oid: number): ValueParser {
    let parser = this.handedOut.get(oid);
    if (!parser) {
      const rule = this.ruleOf(oid, 0);
      parser = neverThrows(this.rawJson ? rule : parsingJson(rule));
      this.handedOut.set(oid, parser);
    }
    return parser;
  }

  nameOf(oid: number): string | undefined {
    return BUILTIN_TYPE_NAMES.get(oid) ?? this.custom.get(oid)?.name;
  }

  /** Some field of `results` has a type this registry cannot name yet (checked without allocating). */
  anyUnknown(results: readonly { fields: readonly { dataTypeID: number }[] }[]): boolean {
    for (const result of results) {
      for (const field of result.fields)
        if (this.nameOf(field.dataTypeID) === undefined) return true;
    }
    return false;
  }

  /** OIDs among `oids` whose name is not known yet. */
  unknown(oids: Iterable<number>): number[] {
    const missing = new Set<number>();
    for (const oid of oids) if (this.nameOf(oid) === undefined) missing.add(oid);
    return [...missing];
  }

  remember(types: Map<number, CustomType>): void {
    for (const [oid, type] of types) this.custom.set(oid, type);
    // A custom array's parser may have been handed out as text before its element was known.
    this.handedOut.clear();
  }

  /** For pg's `types` option: the same rules for any query pg runs itself on this pool. */
  readonly pgTypes = {
    getTypeParser: (oid: number, format?: string): ValueParser =>
      format === 'binary' ? (value) => value : this.parserFor(oid),
  };

  /** The unwrapped rule: a failure inside an element must reach the wrapper of the whole value. */
  private ruleOf(oid: number, depth: number): ValueParser {
    const custom = this.custom.get(oid);
    if (!custom || custom.elementOid === 0 || depth > 8) return builtinValueParser(oid);
    const delimiter = custom.delimiter ?? builtinDelimiter(custom.elementOid);
    return arrayParser(this.ruleOf(custom.elementOid, depth + 1), delimiter);
  }
}
