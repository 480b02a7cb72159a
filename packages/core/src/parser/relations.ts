import { effectOfCall } from './features';
import { featuresFromTree } from './tree-features';
import type { StatementClass, StatementRelations } from './types';
import {
  fieldsOf,
  isFields,
  listOf,
  nameParts,
  stringOf,
  unwrapNode,
  walkTree,
  type TreeFields,
} from './tree';

/** Where each kind of statement names the relation it writes (a bare RangeVar, or a list of them). */
const WRITE_TARGET_FIELDS: Readonly<Record<string, string>> = {
  InsertStmt: 'relation',
  UpdateStmt: 'relation',
  DeleteStmt: 'relation',
  MergeStmt: 'relation',
  CreateStmt: 'relation',
  ViewStmt: 'view',
  AlterTableStmt: 'relation',
  AlterObjectSchemaStmt: 'relation',
  RefreshMatViewStmt: 'relation',
  CreateSeqStmt: 'sequence',
  AlterSeqStmt: 'sequence',
  RuleStmt: 'relation',
  CreatePolicyStmt: 'table',
  AlterPolicyStmt: 'table',
  TruncateStmt: 'relations',
};

/** Statements that change no rows a cached result could hold (their reads still count). */
const NO_DATA_CHANGE = new Set(
  `SelectStmt VariableSetStmt VariableShowStmt TransactionStmt ListenStmt UnlistenStmt NotifyStmt
  PrepareStmt DeallocateStmt DeclareCursorStmt ClosePortalStmt FetchStmt DiscardStmt LoadStmt
  CommentStmt CreateFunctionStmt AlterFunctionStmt DefineStmt CompositeTypeStmt CreateEnumStmt
  AlterEnumStmt CreateDomainStmt CreatedbStmt DropdbStmt AlterDatabaseStmt AlterDatabaseSetStmt
  CreateTableSpaceStmt DropTableSpaceStmt AlterSystemStmt VacuumStmt CheckPointStmt LockStmt
  ClusterStmt ReindexStmt IndexStmt CreateTrigStmt CreateEventTrigStmt CreateRoleStmt DropRoleStmt
  AlterRoleStmt AlterRoleSetStmt CreateStatsStmt CreatePublicationStmt AlterPublicationStmt
  SecLabelStmt ConstraintsSetStmt CreateSchemaStmt AlterOwnerStmt CreateCastStmt CreateOpClassStmt
  CreateOpFamilyStmt AlterOpFamilyStmt CreateConversionStmt CreateTransformStmt CreateAmStmt
  AlterTSDictionaryStmt AlterTSConfigurationStmt CreatePLangStmt`
    .trim()
    .split(/\s+/),
);

const DROPPED_RELATIONS = new Set([
  'OBJECT_TABLE',
  'OBJECT_VIEW',
  'OBJECT_MATVIEW',
  'OBJECT_SEQUENCE',
  'OBJECT_FOREIGN_TABLE',
]);
/** Objects named `table.object`: dropping them changes what the table shows or does. */
const DROPPED_TABLE_PARTS = new Set(['OBJECT_POLICY', 'OBJECT_RULE', 'OBJECT_TRIGGER']);
const DROPPED_WITHOUT_DATA = new Set([
  'OBJECT_INDEX',
  'OBJECT_FUNCTION',
  'OBJECT_PROCEDURE',
  'OBJECT_ROUTINE',
  'OBJECT_AGGREGATE',
  'OBJECT_OPERATOR',
  'OBJECT_STATISTIC_EXT',
  'OBJECT_ROLE',
  'OBJECT_EVENT_TRIGGER',
  'OBJECT_PUBLICATION',
]);

function relationName(rangeVar: TreeFields): string {
  const name = stringOf(rangeVar, 'relname') ?? '';
  const schema = stringOf(rangeVar, 'schemaname');
  return schema === undefined ? name : `${schema}.${name}`;
}

/** What `DROP ...` writes: names, nothing (`[]`), or unknown (`null`, e.g. CASCADE, schemas). */
function droppedRelations(fields: TreeFields): string[] | null {
  const removeType = stringOf(fields, 'removeType') ?? '';
  if (stringOf(fields, 'behavior') === 'DROP_CASCADE') return null;
  if (DROPPED_WITHOUT_DATA.has(removeType)) return [];
  const dropsRelation = DROPPED_RELATIONS.has(removeType);
  if (!dropsRelation && !DROPPED_TABLE_PARTS.has(removeType)) return null;
  return listOf(fields, 'objects').map((object) => {
    const parts = nameParts(listOf(fieldsOf(object, 'List'), 'items'));
    return (dropsRelation ? parts : parts.slice(0, -1)).join('.');
  });
}

/** The EXPLAIN's inner statement, since its relations are the ones that matter. */
function explainedStatement(root: unknown): unknown {
  const node = unwrapNode(root);
  return node?.kind === 'ExplainStmt' ? node.fields['query'] : root;
}

/**
 * The relations a statement reads and writes, from its tree (null: unparsable), as PostgreSQL
 * names them; views are not expanded, and trigger, rule and cascade writes cannot be seen.
 */
export function relationsFromTree(
  tree: unknown,
  statementClass: StatementClass,
): StatementRelations {
  const statement = explainedStatement(tree);
  const top = unwrapNode(statement);
  if (top === null) return { reads: null, writes: statementClass === 'read' ? [] : null };

  const writeTargets = new Set<TreeFields>();
  const readCandidates: TreeFields[] = [];
  const cteNames = new Set<string>();
  const writes: string[] = [];
  // For statements of other kinds (DO, EXECUTE, GRANT, CREATE EXTENSION...) nobody can tell.
  const kindIsKnown =
    NO_DATA_CHANGE.has(top.kind) ||
    top.kind in WRITE_TARGET_FIELDS ||
    top.kind === 'DropStmt' ||
    top.kind === 'CopyStmt' ||
    top.kind === 'CreateTableAsStmt' ||
    (top.kind === 'RenameStmt' && fieldsOf(top.fields, 'relation') !== null);
  let writesKnown = kindIsKnown;
  let readsKnown = kindIsKnown;

  walkTree(statement, (key, fields) => {
    const targetField = WRITE_TARGET_FIELDS[key];
    if (targetField !== undefined) markTargets(fields[targetField]);
    else if (key === 'SelectStmt' || key === 'CreateTableAsStmt') {
      markTargets(fieldsOf(fieldsOf(fields, key === 'SelectStmt' ? 'intoClause' : 'into'), 'rel'));
    } else if (key === 'RenameStmt' || (key === 'CopyStmt' && fields['is_from'] === true)) {
      markTargets(fields['relation']);
    } else if (key === 'DropStmt') {
      const dropped = droppedRelations(fields);
      if (dropped === null) writesKnown = false;
      else writes.push(...dropped);
    } else if (key === 'CommonTableExpr') {
      const name = stringOf(fields, 'ctename');
      if (name !== undefined) cteNames.add(name);
    } else if (typeof fields['relname'] === 'string' && !writeTargets.has(fields)) {
      readCandidates.push(fields);
    }
  });

  function markTargets(target: unknown): void {
    for (const item of Array.isArray(target) ? target : [target]) {
      const rangeVar =
        isFields(item) && typeof item['relname'] === 'string' ? item : fieldsOf(item, 'RangeVar');
      if (rangeVar === null) continue;
      writeTargets.add(rangeVar);
      writes.push(relationName(rangeVar));
    }
  }

  for (const call of featuresFromTree(statement).calls) {
    const effect = effectOfCall(call);
    if (effect === 'unknown') readsKnown = false;
    if (effect === 'writes-data' || effect === 'outside-world') writesKnown = false;
  }
  const reads = readCandidates
    .filter(
      (rangeVar) =>
        stringOf(rangeVar, 'schemaname') !== undefined ||
        !cteNames.has(stringOf(rangeVar, 'relname') ?? ''),
    )
    .map(relationName);
  return {
    reads: readsKnown ? unique(reads) : null,
    writes: statementClass === 'read' ? [] : writesKnown ? unique(writes) : null,
  };
}

function unique(names: string[]): string[] {
  return [...new Set(names)];
}
