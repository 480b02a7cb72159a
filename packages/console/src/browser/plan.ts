/**
 * Query plans: the EXPLAIN statement the console sends for the statement to explain, and the tree
 * it shows from PostgreSQL's `EXPLAIN (FORMAT JSON …)` answer, with each node's exclusive time
 * (its own time, without its children's) and the nodes that took most of it marked. Pure: no DOM.
 */
import { onlyReads, wordsOf } from './sql-text';

export interface ExplainRequest {
  sql: string;
  /** Plain EXPLAIN and EXPLAIN ANALYZE of a read run in a READ ONLY transaction. */
  readOnly: boolean;
  /**
   * EXPLAIN ANALYZE executes the statement: one that may write runs with sqlgate's `dryRun`, in a
   * transaction that is rolled back, so explaining never changes data.
   */
  dryRun: boolean;
}

/**
 * `formReadOnly`: the form's Read only is ticked, so a statement that may write is sent read-only
 * too, and PostgreSQL refuses it rather than running it in a rolled-back transaction.
 */
export function explainRequest(
  statement: string,
  analyze: boolean,
  formReadOnly = false,
): ExplainRequest {
  const options = analyze ? 'FORMAT JSON, ANALYZE, BUFFERS' : 'FORMAT JSON';
  const writes = analyze && !onlyReads(statement) && !formReadOnly;
  return { sql: `EXPLAIN (${options}) ${statement}`, readOnly: !writes, dryRun: writes };
}

/** The statements PostgreSQL's EXPLAIN takes, by their first word (CREATE only with AS). */
const EXPLAINABLE = new Set([
  'select',
  'insert',
  'update',
  'delete',
  'merge',
  'values',
  'table',
  'with',
  'execute',
  'declare',
]);

/**
 * Why `statement` cannot be explained, or undefined when EXPLAIN takes it: SELECT, INSERT, UPDATE,
 * DELETE, MERGE, VALUES, TABLE, WITH, EXECUTE, DECLARE, and CREATE TABLE / CREATE MATERIALIZED
 * VIEW … AS. Anything else (COMMIT, VACUUM, CREATE INDEX…) is refused before any request.
 */
export function unexplainable(statement: string): string | undefined {
  const words = wordsOf(statement);
  const first = words[0] ?? '';
  if (EXPLAINABLE.has(first)) return undefined;
  if (first === 'create' && words.includes('as')) {
    const kind = words.slice(1, words.indexOf('as'));
    const created = kind.filter((word) => !/^(global|local|temp|temporary|unlogged)$/.test(word));
    if (created[0] === 'table' || (created[0] === 'materialized' && created[1] === 'view')) {
      return undefined;
    }
  }
  const name = first === '' ? 'this statement' : first.toUpperCase();
  return (
    `${name} cannot be explained: EXPLAIN takes SELECT, INSERT, UPDATE, DELETE, MERGE, VALUES, ` +
    'TABLE, WITH, EXECUTE, DECLARE, and CREATE TABLE or CREATE MATERIALIZED VIEW … AS'
  );
}

export interface PlanNode {
  nodeType: string;
  /** What the node reads or does: `on orders o`, `using orders_pkey`, `Inner`, … */
  target: string;
  /** Conditions and filters, as PostgreSQL prints them. */
  details: string[];
  estimatedRows: number;
  totalCost: number;
  /** Rows per loop, with ANALYZE. */
  actualRows?: number;
  loops?: number;
  /** Time of all its loops, children included (ms), with ANALYZE. */
  totalMs?: number;
  /** totalMs without the children's (ms), never below 0. */
  exclusiveMs?: number;
  /** Buffer counts that are not 0, such as `shared hit 12, read 3`. */
  buffers?: string;
  /** One of the nodes that took most of the time (see SLOW_SHARE). */
  slow: boolean;
  children: PlanNode[];
}

export interface Plan {
  root: PlanNode;
  analyzed: boolean;
  planningMs?: number;
  executionMs?: number;
}

/** A node is marked slow when its exclusive time is at least this share of the whole… */
export const SLOW_SHARE = 0.2;
/** …and it is among this many slowest. */
export const SLOW_MAX = 3;

type Json = Record<string, unknown>;

const numberOf = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

const textOf = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

function targetOf(node: Json): string {
  const parts: string[] = [];
  const relation = textOf(node['Relation Name']);
  const alias = textOf(node.Alias);
  if (relation) parts.push(`on ${relation}${alias && alias !== relation ? ` ${alias}` : ''}`);
  else if (textOf(node['CTE Name'])) parts.push(`on ${textOf(node['CTE Name'])}`);
  else if (textOf(node['Function Name'])) parts.push(`on ${textOf(node['Function Name'])}()`);
  const index = textOf(node['Index Name']);
  if (index) parts.push(`using ${index}`);
  const join = textOf(node['Join Type']);
  if (join) parts.push(join);
  const operation = textOf(node.Operation);
  if (operation) parts.push(operation);
  const subplan = textOf(node['Subplan Name']);
  if (subplan) parts.push(`(${subplan})`);
  return parts.join(' ');
}

const DETAIL_KEYS = [
  'Index Cond',
  'Recheck Cond',
  'Hash Cond',
  'Merge Cond',
  'Join Filter',
  'Filter',
  'Rows Removed by Filter',
  'Sort Key',
  'Group Key',
];

function detailsOf(node: Json): string[] {
  return DETAIL_KEYS.flatMap((name) => {
    const value = node[name];
    if (value === undefined || value === null) return [];
    return [`${name}: ${Array.isArray(value) ? value.join(', ') : String(value)}`];
  });
}

const BUFFER_KINDS = ['Shared', 'Local', 'Temp'];
const BUFFER_COUNTS = ['Hit', 'Read', 'Dirtied', 'Written'];

function buffersOf(node: Json): string | undefined {
  const kinds = BUFFER_KINDS.flatMap((kind) => {
    const counts = BUFFER_COUNTS.flatMap((count) => {
      const value = numberOf(node[`${kind} ${count} Blocks`]);
      return value ? [`${count.toLowerCase()} ${value}`] : [];
    });
    return counts.length > 0 ? [`${kind.toLowerCase()} ${counts.join(' ')}`] : [];
  });
  return kinds.length > 0 ? kinds.join(', ') : undefined;
}

function nodeOf(node: Json): PlanNode {
  const children = (Array.isArray(node.Plans) ? node.Plans : [])
    .filter((child): child is Json => typeof child === 'object' && child !== null)
    .map(nodeOf);
  const shaped: PlanNode = {
    nodeType: textOf(node['Node Type']) ?? '?',
    target: targetOf(node),
    details: detailsOf(node),
    estimatedRows: numberOf(node['Plan Rows']) ?? 0,
    totalCost: numberOf(node['Total Cost']) ?? 0,
    slow: false,
    children,
  };
  const actualTime = numberOf(node['Actual Total Time']);
  if (actualTime !== undefined) {
    shaped.actualRows = numberOf(node['Actual Rows']) ?? 0;
    shaped.loops = numberOf(node['Actual Loops']) ?? 1;
    // Actual Total Time is per loop: the node's whole time is that times its loops.
    shaped.totalMs = actualTime * shaped.loops;
    const childrenMs = children.reduce((sum, child) => sum + (child.totalMs ?? 0), 0);
    shaped.exclusiveMs = Math.max(0, shaped.totalMs - childrenMs);
  }
  const buffers = buffersOf(node);
  if (buffers) shaped.buffers = buffers;
  return shaped;
}

/** Every node of the tree, root first. */
export function planNodes(root: PlanNode): PlanNode[] {
  return [root, ...root.children.flatMap(planNodes)];
}

function markSlow(root: PlanNode): void {
  const whole = root.totalMs ?? 0;
  if (whole <= 0) return;
  planNodes(root)
    .filter((node) => (node.exclusiveMs ?? 0) >= whole * SLOW_SHARE)
    .sort((a, b) => (b.exclusiveMs ?? 0) - (a.exclusiveMs ?? 0))
    .slice(0, SLOW_MAX)
    .forEach((node) => (node.slow = true));
}

/**
 * The plan of EXPLAIN (FORMAT JSON)'s one value (`[{Plan, Planning Time, Execution Time}]`, or its
 * text); throws when the value is not a plan.
 */
export function planOf(value: unknown): Plan {
  const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : value;
  const top = (Array.isArray(parsed) ? parsed[0] : parsed) as Json | undefined;
  if (typeof top !== 'object' || top === null || typeof top.Plan !== 'object' || !top.Plan) {
    throw new Error('The answer holds no plan');
  }
  const root = nodeOf(top.Plan as Json);
  markSlow(root);
  const plan: Plan = { root, analyzed: root.totalMs !== undefined };
  const planningMs = numberOf(top['Planning Time']);
  if (planningMs !== undefined) plan.planningMs = planningMs;
  const executionMs = numberOf(top['Execution Time']);
  if (executionMs !== undefined) plan.executionMs = executionMs;
  return plan;
}

/** Milliseconds as the plan view prints them. */
export function formatMs(ms: number): string {
  return ms >= 100
    ? `${ms.toFixed(0)} ms`
    : ms >= 1
      ? `${ms.toFixed(2)} ms`
      : `${ms.toFixed(3)} ms`;
}
