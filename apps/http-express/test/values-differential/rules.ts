/**
 * The rule each type follows on its way to JSON (docs/decisions.md section 4, 10.13, 10.14),
 * written here from the decisions and not taken from the adapter, and the check of one JSON value
 * against PostgreSQL's text.
 */
import { parseLossless, sameJson, type JsonNode } from './lossless-json';

export type Rule =
  | { kind: 'text' | 'boolean' | 'integer' | 'float' | 'json' | 'vector' }
  | { kind: 'array'; element: Rule; elementOid: number };

export interface TypeInfo {
  oid: number;
  typtype: string;
  typcategory: string;
  typelem: number;
  typbasetype: number;
  /** format_type(oid, NULL): the name to cast to. */
  sqlName: string;
}

const SCALAR_RULES = new Map<number, Rule['kind']>([
  [16, 'boolean'],
  [21, 'integer'],
  [23, 'integer'],
  [26, 'integer'],
  [700, 'float'],
  [701, 'float'],
  [114, 'json'],
  [3802, 'json'],
  [22, 'vector'],
  [30, 'vector'],
]);

/** A domain follows its base type; an array, its element's rule. */
export function ruleOf(oid: number, types: ReadonlyMap<number, TypeInfo>): Rule {
  const type = types.get(oid);
  if (type?.typtype === 'd') return ruleOf(type.typbasetype, types);
  const scalar = SCALAR_RULES.get(oid);
  if (scalar) return { kind: scalar } as Rule;
  if (type && type.typcategory === 'A' && type.typelem !== 0)
    return { kind: 'array', element: ruleOf(type.typelem, types), elementOid: type.typelem };
  return { kind: 'text' };
}

/** What PostgreSQL said a value is: its text, and for arrays how it decomposes. */
export interface OracleValue {
  text: string | null;
  /** Arrays: array_dims (null for an empty array) and the elements, flattened, as nested values. */
  dims?: string | null;
  elements?: OracleValue[];
}

const SPECIAL_FLOATS = new Set(['NaN', 'Infinity', '-Infinity']);

/** Why `node` (sqlgate's JSON) does not show `value` under `rule`; undefined when it does. */
export function difference(node: JsonNode, value: OracleValue, rule: Rule): string | undefined {
  const { text } = value;
  if (text === null) return node === null ? undefined : 'expected null';
  switch (rule.kind) {
    case 'text':
      return node === text ? undefined : 'expected the text';
    case 'boolean':
      return node === (text === 't') && (text === 't' || text === 'f')
        ? undefined
        : 'expected a boolean';
    case 'integer':
      return isNumber(node) && node.text === text ? undefined : 'expected the same integer digits';
    case 'float':
      if (SPECIAL_FLOATS.has(text))
        return node === text ? undefined : 'expected the special float as text';
      // The same digits, or the same double (JavaScript writes 1e-7 where PostgreSQL writes 1e-07).
      return isNumber(node) && (node.text === text || Object.is(Number(node.text), Number(text)))
        ? undefined
        : 'expected the same float';
    case 'json':
      return sameJson(node, parseLossless(text)) ? undefined : 'expected the same JSON';
    case 'vector': {
      const parts = text === '' ? [] : text.split(' ');
      return Array.isArray(node) &&
        node.length === parts.length &&
        node.every((item, i) => isNumber(item) && item.text === parts[i])
        ? undefined
        : 'expected an array of numbers';
    }
    case 'array':
      return arrayDifference(node, value, rule);
  }
}

function arrayDifference(
  node: JsonNode,
  value: OracleValue,
  rule: Extract<Rule, { kind: 'array' }>,
): string | undefined {
  const { dims, elements = [] } = value;
  if (dims === undefined) return 'the oracle did not decompose this array';
  if (dims === null) return Array.isArray(node) && node.length === 0 ? undefined : 'expected []';
  const bounds = [...dims.matchAll(/\[(-?\d+):(-?\d+)\]/g)].map((m) => [
    Number(m[1]),
    Number(m[2]),
  ]);
  if (bounds.some(([lower]) => lower !== 1))
    return node === value.text ? undefined : 'expected the text of an array with other bounds';
  let index = 0;
  const check = (at: JsonNode, depth: number): string | undefined => {
    const [, upper] = bounds[depth] as [number, number];
    if (!Array.isArray(at) || at.length !== upper)
      return `expected ${upper} items at depth ${depth}`;
    for (const item of at) {
      const problem =
        depth + 1 < bounds.length
          ? check(item, depth + 1)
          : difference(item, elements[index++] ?? { text: null }, rule.element);
      if (problem) return problem;
    }
    return undefined;
  };
  return check(node, 0);
}

function isNumber(node: JsonNode): node is { kind: 'number'; text: string } {
  return (
    node !== null && typeof node === 'object' && !Array.isArray(node) && node.kind === 'number'
  );
}

/** Whether the rule is "PostgreSQL's text" (for the report). */
export function isTextRule(rule: Rule): boolean {
  return rule.kind === 'text';
}
