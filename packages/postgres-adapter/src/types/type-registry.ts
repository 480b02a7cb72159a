/**
 * Type names and parsers for one pool. Built-in types come from a static table; custom types
 * (enums, composites, domains, ranges, their arrays) are looked up once in pg_type and remembered.
 */
import { BUILTIN_TYPE_NAMES } from './builtin-types';
import { arrayParser, builtinValueParser, type ValueParser } from './value-parsers';

export interface CustomType {
  name: string;
  /** Element type OID when the type is an array, else 0. */
  elementOid: number;
}

/** Runs the pg_type look-up on a connection of the pool. */
export type TypeLookup = (oids: number[]) => Promise<Map<number, CustomType>>;

export const CUSTOM_TYPES_SQL =
  "SELECT oid::int4 AS oid, typname AS name, CASE WHEN typcategory = 'A' THEN typelem::int4 ELSE 0 END AS element " +
  'FROM pg_catalog.pg_type WHERE oid = ANY($1::oid[])';

export class TypeRegistry {
  private readonly custom = new Map<number, CustomType>();

  /** The parser for a type known now; custom types parse as text until `remember` learned them. */
  parserFor(oid: number): ValueParser {
    const custom = this.custom.get(oid);
    if (custom && custom.elementOid !== 0) return arrayParser(custom.elementOid);
    return builtinValueParser(oid);
  }

  nameOf(oid: number): string | undefined {
    return BUILTIN_TYPE_NAMES.get(oid) ?? this.custom.get(oid)?.name;
  }

  /** OIDs among `oids` whose name is not known yet. */
  unknown(oids: Iterable<number>): number[] {
    const missing = new Set<number>();
    for (const oid of oids) if (this.nameOf(oid) === undefined) missing.add(oid);
    return [...missing];
  }

  remember(types: Map<number, CustomType>): void {
    for (const [oid, type] of types) this.custom.set(oid, type);
  }

  /** For pg's `types` option: the same rules for any query pg runs itself on this pool. */
  readonly pgTypes = {
    getTypeParser: (oid: number, format?: string): ValueParser =>
      format === 'binary' ? (value) => value : this.parserFor(oid),
  };
}
