/**
 * What calling a function does, for classification and caching, every list in one place: the
 * parser runs without the catalog's volatility. A function not named here is volatile (never
 * cached), not a write: READ ONLY transactions make a writing one fail with 25006
 * (docs/decisions.md 2).
 */

export type FunctionEffect =
  /** Changes data or objects of the database (nextval, lo_create...): a write. */
  | 'writes-data'
  /** Changes connection state that outlives the statement (session advisory locks...). */
  | 'session-state'
  /** Takes transaction-scoped locks or ids (pg_advisory_xact_lock, txid_current): a write. */
  | 'transaction-state'
  /** Acts outside the statement's own data: other backends, server files, remote servers. */
  | 'outside-world'
  /** No side effect, but the result changes between calls (now(), random()): not cacheable. */
  | 'volatile'
  /** A built-in known to be immutable or stable: cacheable. */
  | 'stable'
  /** Not a known built-in: assumed volatile, not assumed to write. */
  | 'unknown';

function words(list: string): ReadonlySet<string> {
  return new Set(list.trim().split(/\s+/));
}

const WRITES_DATA = words(`
  nextval setval
  lo_import lo_create lo_creat lo_unlink lo_put lo_from_bytea lo_truncate lo_truncate64 lowrite
  pg_restore_relation_stats pg_restore_attribute_stats pg_clear_relation_stats pg_clear_attribute_stats
  brin_summarize_new_values brin_summarize_range brin_desummarize_range gin_clean_pending_list
  pg_import_system_collations pg_nextoid
`);

const SESSION_STATE = words(`
  set_config setseed
  pg_advisory_lock pg_advisory_lock_shared pg_try_advisory_lock pg_try_advisory_lock_shared
  pg_advisory_unlock pg_advisory_unlock_shared pg_advisory_unlock_all
  dblink_connect dblink_connect_u dblink_disconnect dblink_open dblink_close dblink_send_query
  pg_replication_origin_session_setup pg_replication_origin_session_reset
`);

const TRANSACTION_STATE = words(`
  pg_advisory_xact_lock pg_advisory_xact_lock_shared
  pg_try_advisory_xact_lock pg_try_advisory_xact_lock_shared
  txid_current pg_current_xact_id
  lo_open lo_close loread lo_lseek lo_lseek64 lo_tell lo_tell64
`);

const OUTSIDE_WORLD = words(`
  pg_terminate_backend pg_cancel_backend pg_reload_conf pg_rotate_logfile pg_notify
  pg_switch_wal pg_create_restore_point pg_promote pg_wal_replay_pause pg_wal_replay_resume
  pg_backup_start pg_backup_stop pg_log_backend_memory_contexts pg_log_standby_snapshot
  pg_create_physical_replication_slot pg_create_logical_replication_slot pg_drop_replication_slot
  pg_copy_physical_replication_slot pg_copy_logical_replication_slot pg_replication_slot_advance
  pg_logical_slot_get_changes pg_logical_slot_get_binary_changes pg_logical_emit_message
  pg_replication_origin_create pg_replication_origin_drop pg_replication_origin_advance
  pg_stat_statements_reset lo_export dblink dblink_exec
  pg_file_write pg_file_rename pg_file_unlink pg_file_sync
`);

/** Volatile built-ins (any function with a side effect above is volatile too). */
const VOLATILE = words(`
  now statement_timestamp clock_timestamp transaction_timestamp timeofday age
  random random_normal gen_random_uuid uuidv4 uuidv7 currval lastval lo_get
  txid_current_if_assigned txid_current_snapshot txid_status pg_current_snapshot
  pg_current_xact_id_if_assigned pg_xact_status pg_xact_commit_timestamp pg_last_committed_xact
  pg_backend_pid pg_postmaster_start_time pg_conf_load_time pg_is_in_recovery pg_trigger_depth
  pg_relation_size pg_total_relation_size pg_table_size pg_indexes_size pg_database_size
  pg_tablespace_size pg_blocking_pids pg_safe_snapshot_blocking_pids pg_export_snapshot
  pg_notification_queue_usage pg_listening_channels pg_my_temp_schema pg_sequence_last_value
  inet_client_addr inet_client_port inet_server_addr inet_server_port
  current_setting current_schema current_schemas pg_jit_available pg_stat_file pg_tablespace_databases
`);

/**
 * Built-ins that read values of any type from JSON: a date/time value reads a clock word from the
 * clock (docs/decisions.md 10.36), so their results change as a volatile function's do.
 */
const READS_VALUES_OF_ANY_TYPE = words(`
  json_populate_record jsonb_populate_record json_populate_recordset jsonb_populate_recordset
  jsonb_populate_record_valid json_to_record jsonb_to_record json_to_recordset jsonb_to_recordset
  json_value json_query json_table
`);

/** Families of functions named by prefix, checked in order after the exact lists. */
const PREFIXES: ReadonlyArray<readonly [string, FunctionEffect]> = [
  ['pg_advisory_xact_', 'transaction-state'],
  ['pg_try_advisory_xact_', 'transaction-state'],
  ['pg_advisory_', 'session-state'],
  ['pg_try_advisory_', 'session-state'],
  ['lo_', 'writes-data'],
  ['dblink', 'outside-world'],
  ['pg_stat_reset', 'outside-world'],
  ['pg_replication_origin_', 'outside-world'],
  ['pg_sleep', 'volatile'],
  ['uuid_generate_', 'volatile'],
  ['pg_stat_', 'volatile'],
  ['pg_current_', 'volatile'],
  ['pg_last_', 'volatile'],
  ['pg_ls_', 'volatile'],
  ['pg_read_', 'volatile'],
  ['pg_control_', 'volatile'],
  ['pg_get_wal_', 'volatile'],
];

/**
 * Known immutable or stable built-ins, and type names that look like calls (`varchar(10)`).
 * XMLTABLE is syntax that looks like one; what its columns read is clock-features.ts's to judge.
 */
const STABLE = words(`
  count sum avg min max every bool_and bool_or bit_and bit_or bit_xor array_agg string_agg
  json_agg jsonb_agg json_object_agg jsonb_object_agg xmlagg stddev stddev_pop stddev_samp
  variance var_pop var_samp corr covar_pop covar_samp regr_slope regr_intercept regr_count
  percentile_cont percentile_disc mode rank dense_rank percent_rank cume_dist row_number ntile
  lag lead first_value last_value nth_value any_value range_agg range_intersect_agg grouping
  coalesce nullif greatest least abs round floor ceil ceiling trunc mod div power pow sqrt cbrt exp
  ln log log10 sign pi degrees radians sin cos tan asin acos atan atan2 sind cosd tand sinh cosh
  tanh gcd lcm factorial width_bucket scale min_scale trim_scale erf erfc
  lower upper initcap length char_length character_length octet_length bit_length substring substr
  position strpos trim btrim ltrim rtrim lpad rpad left right repeat reverse replace translate
  concat concat_ws format split_part starts_with ascii chr md5 sha224 sha256 sha384 sha512
  encode decode to_hex to_bin to_oct quote_ident quote_literal quote_nullable overlay normalize
  regexp_replace regexp_matches regexp_match regexp_split_to_array regexp_split_to_table
  regexp_count regexp_instr regexp_like regexp_substr string_to_array string_to_table
  array_to_string array_length array_lower array_upper array_ndims array_dims array_append
  array_prepend array_cat array_position array_positions array_remove array_replace array_fill
  array_reverse array_sort array_shuffle array_sample cardinality unnest generate_series
  generate_subscripts trim_array array_to_json row_to_json to_json to_jsonb json_build_object
  jsonb_build_object json_build_array jsonb_build_array json_object jsonb_object json_array
  json_array_elements jsonb_array_elements json_array_elements_text jsonb_array_elements_text
  json_array_length jsonb_array_length json_each jsonb_each json_each_text jsonb_each_text
  json_extract_path jsonb_extract_path json_extract_path_text jsonb_extract_path_text
  json_object_keys jsonb_object_keys json_typeof jsonb_typeof jsonb_set jsonb_set_lax jsonb_insert
  jsonb_pretty jsonb_strip_nulls json_strip_nulls jsonb_path_query jsonb_path_query_array
  jsonb_path_query_first jsonb_path_exists jsonb_path_match json_scalar json_serialize json_exists
  to_char to_date to_timestamp to_number date_part date_trunc date_bin extract make_date make_time
  make_timestamp make_timestamptz make_interval justify_days justify_hours justify_interval
  isfinite timezone overlaps similar_to_escape like_escape is_normalized pg_collation_for
  system_user merge_action
  to_tsvector to_tsquery plainto_tsquery phraseto_tsquery websearch_to_tsquery ts_rank ts_rank_cd
  ts_headline setweight strip numnode querytree tsvector_to_array array_to_tsvector
  num_nonnulls num_nulls pg_typeof format_type to_regclass to_regtype to_regproc to_regprocedure
  to_regoper to_regoperator to_regnamespace to_regrole to_regcollation to_regtypemod
  pg_get_viewdef pg_get_ruledef pg_get_indexdef pg_get_constraintdef pg_get_functiondef
  pg_get_function_arguments pg_get_function_result pg_get_triggerdef pg_get_expr pg_get_userbyid
  pg_get_serial_sequence pg_get_keywords pg_column_size pg_size_pretty pg_size_bytes
  obj_description col_description shobj_description has_table_privilege has_column_privilege
  has_schema_privilege has_database_privilege has_function_privilege has_sequence_privilege
  has_any_column_privilege pg_has_role pg_table_is_visible pg_type_is_visible
  pg_function_is_visible version current_database pg_encoding_to_char pg_char_to_encoding host hostmask netmask
  network masklen broadcast family abbrev set_masklen inet_merge inet_same_family
  xmlelement xmlforest xmlconcat xmlpi xmlroot xmlparse xmlserialize xmlexists xpath xpath_exists
  xmltable
  int2 int4 int8 integer smallint bigint float4 float8 real float numeric decimal text varchar
  char character nchar varying bool boolean date time timetz timestamp timestamptz interval bytea
  json jsonb uuid inet cidr macaddr macaddr8 bit varbit money oid regclass regtype regproc
  point line lseg box path polygon circle tsvector tsquery xml name
  area center diameter height width radius isclosed isopen npoints pclose popen
  lower_inc upper_inc lower_inf upper_inf isempty range_merge multirange int4range int8range
  numrange tsrange tstzrange daterange
`);

/** One lookup for the exact lists; a later list wins, so a side effect is never masked as stable. */
const EFFECT_BY_NAME = new Map<string, FunctionEffect>();
for (const [list, effect] of [
  [STABLE, 'stable'],
  [VOLATILE, 'volatile'],
  [READS_VALUES_OF_ANY_TYPE, 'volatile'],
  [OUTSIDE_WORLD, 'outside-world'],
  [TRANSACTION_STATE, 'transaction-state'],
  [SESSION_STATE, 'session-state'],
  [WRITES_DATA, 'writes-data'],
] as const) {
  for (const name of list) EFFECT_BY_NAME.set(name, effect);
}
const HAS_FAMILY_PREFIX = /^(?:pg_|lo_|dblink|uuid_)/;

/**
 * What calling `name` does. `schema` is the qualifying schema when the call names one: a function in
 * any schema other than pg_catalog is user-defined, whatever its name.
 */
export function functionEffect(name: string, schema?: string): FunctionEffect {
  if (schema !== undefined && schema !== 'pg_catalog') return 'unknown';
  const known = EFFECT_BY_NAME.get(name);
  if (known !== undefined) return known;
  if (HAS_FAMILY_PREFIX.test(name)) {
    for (const [prefix, effect] of PREFIXES) if (name.startsWith(prefix)) return effect;
  }
  return 'unknown';
}

/** The effect has consequences beyond returning a value: the statement cannot be a read. */
export function hasSideEffect(effect: FunctionEffect): boolean {
  return effect !== 'volatile' && effect !== 'stable' && effect !== 'unknown';
}

/**
 * SQL keywords that read the clock or the connection's settings without looking like a call
 * (in the syntax tree they are SQLValueFunction nodes, not FuncCall).
 */
export const VOLATILE_KEYWORDS = words(`
  current_timestamp current_time current_date localtime localtimestamp current_schema
`);

/**
 * Views and words whose mere mention makes a result change between runs: live server statistics,
 * locks, settings, and TABLESAMPLE (random rows unless REPEATABLE).
 */
const VOLATILE_RELATIONS = words(`
  pg_locks pg_prepared_xacts pg_prepared_statements pg_cursors pg_backend_memory_contexts
  pg_replication_slots pg_settings pg_file_settings pg_hba_file_rules pg_ident_file_mappings
  pg_shmem_allocations pg_aios tablesample
`);

/** A word of the statement whose presence alone makes its result uncacheable. */
export function isVolatileWord(lowerCaseWord: string): boolean {
  return (
    VOLATILE_KEYWORDS.has(lowerCaseWord) ||
    VOLATILE_RELATIONS.has(lowerCaseWord) ||
    lowerCaseWord.startsWith('pg_stat_') ||
    lowerCaseWord.startsWith('pg_statio_')
  );
}
