/**
 * A request body's schema compiled once (docs/decisions.md 10.52): its check decides each field's
 * type and range, and the first error of a body it refuses becomes the 400 message that
 * docs/interface.md words for that field.
 */
import { KindGuard, Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import {
  TypeCompiler,
  ValueErrorType,
  type TypeCheck,
  type ValueError,
} from '@sinclair/typebox/compiler';
import { CacheOptionsSchema } from './request-schemas';
import { invalid, refuseUnsendableFields, refuseUnsendableName } from './sendable-values';
import { shownFieldName } from './unknown-fields';
import { inexactNumberMessage, inexactNumbersOf } from '../json-text';

type Body = Record<string, unknown>;

/**
 * The fields of a body that `schema` describes, typed as it says; or a thrown RequestError naming
 * the first field it refuses. Text that could not reach PostgreSQL is refused first, whatever
 * else is wrong with its field.
 */
export type ShapeReader<T extends TObject> = (fields: Body) => Static<T>;

export function compileShape<T extends TObject>(schema: T): ShapeReader<T> {
  const check = TypeCompiler.Compile(compilable(schema));
  const textFields = textFieldsOf(schema);
  const known = new Set(Object.keys(schema.properties));
  return (fields) => {
    refuseUnsendableFields(fields, textFields);
    refuseInexactNumbers(fields, schema);
    // The bodies clients send pass the strict check: the hot path ends here, copying nothing.
    if (check.Check(fields)) return fields;
    const lenient = leniently(fields, known);
    if (check.Check(lenient)) return lenient;
    throw invalid(refusalOf(firstError(check, lenient)));
  };
}

/**
 * A number parsing changed (docs/decisions.md 10.8) in a field this body's schema names: in
 * `params`, sent as a string it keeps its digits; in any other field, it is no value the field
 * takes. One in an unknown field is let be: its value is never read.
 */
function refuseInexactNumbers(fields: Body, schema: TObject): void {
  for (const number of inexactNumbersOf(fields)) {
    const field = number.field;
    const fieldSchema = field === undefined ? undefined : schema.properties[field];
    if (field === undefined || fieldSchema === undefined) continue;
    if (field === 'params') throw invalid(inexactNumberMessage(number));
    const refused = { path: `/${field}`, schema: fieldSchema, value: fields[field] };
    throw invalid(refusalOf(refused as ValueError));
  }
}

/**
 * `schema` as TypeBox's compiler checks it, inline: a string `enum` and a `oneOf` of the schema
 * builders are JSON Schema the compiler does not know, so each becomes the union of TypeBox types
 * it means. A `oneOf` means an `anyOf` when no value can match two of its branches, which holds
 * when they take different JSON types, as every request body's do.
 */
function compilable(schema: TSchema): TSchema {
  const compiled = rebuiltForCompiler(schema);
  if (compiled === schema || !KindGuard.IsOptional(schema)) return compiled;
  return Type.Optional(compiled);
}

function rebuiltForCompiler(schema: TSchema): TSchema {
  if (Array.isArray(schema.enum)) {
    const values = schema.enum as string[];
    return Type.Union(
      values.map((value) => Type.Literal(value)),
      { enum: values },
    );
  }
  if (Array.isArray(schema.oneOf)) {
    return Type.Union(disjointBranches(schema.oneOf as TSchema[]).map(compilable));
  }
  if (!KindGuard.IsObject(schema)) return schema;
  const properties = Object.entries(schema.properties).map(([name, property]) => [
    name,
    compilable(property),
  ]);
  const { additionalProperties } = schema;
  return Type.Object(Object.fromEntries(properties), { additionalProperties });
}

/** The branches of a `oneOf`, refused when two may take the same JSON type (1 is a number too). */
function disjointBranches(branches: TSchema[]): TSchema[] {
  const types = branches.map(({ type }) => (type === 'integer' ? 'number' : String(type)));
  if (new Set(types).size < types.length || types.includes('undefined')) {
    throw new Error(`a oneOf whose branches may overlap: ${types.join(', ')}`);
  }
  return branches;
}

/** The fields of a body whose schema admits text (a port may be digits): the text sqlgate reads. */
function textFieldsOf(schema: TObject): ReadonlySet<string> {
  const admitsText = (field: TSchema): boolean =>
    field.type === 'string' || (Array.isArray(field.oneOf) && field.oneOf.some(admitsText));
  const names = Object.keys(schema.properties);
  return new Set(names.filter((name) => admitsText(schema.properties[name]!)));
}

const CACHE_OPTION_NAMES = new Set(Object.keys(CacheOptionsSchema.properties));

/**
 * The body as the contract reads it beyond its schema (docs/interface.md): a field the schema names
 * that is null is absent, an empty `sslMode` is the default, `isolationLevel` is matched in any
 * case, and a port's digits may have leading zeros. Only a body the strict check refused is copied
 * so.
 */
function leniently(fields: Body, known: ReadonlySet<string>): Body {
  const lenient = withoutNulls(fields, known);
  if (lenient.sslMode === '') delete lenient.sslMode;
  if (typeof lenient.isolationLevel === 'string') {
    lenient.isolationLevel = lenient.isolationLevel.toLowerCase();
  }
  if (typeof lenient.port === 'string' && /^[0-9]{1,5}$/.test(lenient.port)) {
    lenient.port = Number(lenient.port);
  }
  // A misspelt cache option is refused even when null; a null option is absent.
  if (isObject(lenient.cache)) lenient.cache = withoutNulls(lenient.cache, CACHE_OPTION_NAMES);
  return lenient;
}

/** A copy without the fields of `known` that are null; fromEntries keeps `__proto__` a field. */
function withoutNulls(fields: Body, known: ReadonlySet<string>): Body {
  const kept = Object.entries(fields).filter(([name, value]) => value !== null || !known.has(name));
  return Object.fromEntries(kept);
}

function isObject(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function firstError(check: TypeCheck<TSchema>, fields: Body): ValueError {
  const error = check.Errors(fields).First();
  if (error === undefined) throw new Error('the schema refused a body without naming an error');
  return error;
}

/** The field an error's path starts with, its JSON Pointer escapes undone. */
function fieldAt(path: string): string {
  return (path.split('/')[1] ?? '').replace(/~1/g, '/').replace(/~0/g, '~');
}

/** The 400 message for the first error the schema found in a body. */
function refusalOf(error: ValueError): string {
  const field = fieldAt(error.path);
  return FIELD_REFUSALS[field]?.(error) ?? typeRefusal(field, error.schema);
}

/** The fields whose refusal says more than their type and range, by the error found. */
const FIELD_REFUSALS: Record<string, ((error: ValueError) => string | undefined) | undefined> = {
  host: (error) =>
    error.type === ValueErrorType.StringPattern
      ? "'host' must be a host name or an IP address, not a socket path"
      : error.type === ValueErrorType.StringMaxLength
        ? "'host' is longer than 255 characters"
        : undefined,
  // Either form refused, the refusal names the one range both share.
  port: () => "'port' must be an integer from 1 to 65535",
  rowMode: () => "'rowMode' must be 'object' or 'array'",
  params: (error) =>
    error.type === ValueErrorType.ArrayMaxItems
      ? `'params' holds ${(error.value as unknown[]).length} values; at most 65535 are allowed`
      : undefined,
  cache: (error) => cacheRefusal(error.value),
};

/**
 * "'timeoutMs' must be an integer from 1 to 2147483647": what a field must be, read from its
 * schema.
 */
function typeRefusal(field: string, schema: TSchema): string {
  const { type, enum: values, minimum, maximum } = schema as FieldSchema;
  if (values !== undefined) return `'${field}' must be one of: ${values.join(', ')}`;
  if (type === 'integer') return `'${field}' must be an integer from ${minimum} to ${maximum}`;
  const kind = type === undefined ? undefined : TYPE_WORDS[type];
  // A field of a new type needs words of its own here; until then, its refusal is a defect.
  if (kind === undefined) throw new Error(`no 400 message for a refused '${field}'`);
  return `'${field}' must be ${kind}`;
}

interface FieldSchema {
  type?: string;
  enum?: readonly string[];
  minimum?: number;
  maximum?: number;
}

const TYPE_WORDS: Record<string, string | undefined> = {
  string: 'a string',
  boolean: 'a boolean',
  array: 'an array',
};

const CACHE_OPTIONS = TypeCompiler.Compile(CacheOptionsSchema);

/**
 * Why `cache` is refused: an object's misspelt option is named (a name no text may hold is
 * refused as such, 10.51), a wrong option gets its range, anything else the forms `cache` takes.
 */
function cacheRefusal(cache: unknown): string {
  const error = isObject(cache) ? CACHE_OPTIONS.Errors(cache).First() : undefined;
  if (error === undefined) {
    return '\'cache\' must be true, false or {"ttlMs": <positive integer>, "swrMs": <positive integer>}';
  }
  const option = fieldAt(error.path);
  if (error.type !== ValueErrorType.ObjectAdditionalProperties) {
    return typeRefusal(option, error.schema);
  }
  refuseUnsendableName(option);
  return `'cache' has an unknown field '${shownFieldName(option)}': it accepts ttlMs and swrMs`;
}
