"""Which functions a judged query may call: one allowlist of read-only built-ins shared by SQLite, DuckDB and
PostgreSQL, and the names that are refused even when a user allows them.

A judged query may call a function only when goldeval knows it reads nothing but its arguments (and the query's
own rows): the documented read-only families below — aggregates, window functions, math, string, date/time,
JSON, array/list, conditional, and type/format functions — each with the names every engine shares and the
names only one engine has. Everything else is refused with its name and how to allow it
(``--allow-function NAME``): a function goldeval does not know may read files, run SQL given as text, change
settings or be the customer's own code (a user-defined function in the database may write).

Some names are refused even when allowed (:func:`hard_refusal`): they read or write server files, run SQL given
as text, change settings, take locks that outlive the transaction, advance sequences, signal or administer the
server, reach other servers, or load code. No option lets a judged query call them.

Left out on purpose (refused unless allowed): ``current_setting`` (read-only, but it reads server paths such as
``data_directory``), sequence and session-state functions, catalog and privilege look-ups, and every engine's
metadata table functions (DuckDB ``duckdb_settings``, ``duckdb_secrets``, ``pragma_*``).

Source: PostgreSQL 15 documentation, chapter 9 "Functions and Operators" (9.3–9.9, 9.15–9.22) and 9.27 "System
Administration Functions" (what is refused); DuckDB documentation, "Functions" (aggregate, window, numeric, text,
date, timestamp, list, map, struct, JSON) and "Securing DuckDB"; SQLite documentation, "Built-In Scalar SQL
Functions", "Built-in Aggregate Functions", "Window Functions", "Date And Time Functions", "JSON Functions",
"Built-In Mathematical SQL Functions", and "Run-Time Loadable Extensions" (``load_extension``), ``fileio.c``
(``readfile`` / ``writefile``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from goldeval.errors import InputError

__all__ = ["ENGINES", "FAMILIES", "Family", "allowed_names", "function_refusal", "hard_refusal", "normalize_allowed"]

#: The engines the allowlist serves (as :attr:`ReadOnlyDatabase.engine` / :attr:`PostgresDatabase.engine` name them).
ENGINES = ("sqlite", "duckdb", "postgresql")


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True, slots=True)
class Family:
    """One documented family of read-only built-ins.

    Attributes:
        name: The family's name, as the engines' documentation groups them (``"aggregate"``, ``"string"`` …).
        common: Names that are read-only built-ins on every engine that has them (an engine without the name
            reports "no such function"; the allowlist never makes a function exist).
        postgresql, duckdb, sqlite: Names read-only on that engine only (the same name may mean something else,
            or something unsafe, on another: DuckDB's ``glob`` lists files, SQLite's matches a pattern).
    """

    name: str
    common: frozenset[str]
    postgresql: frozenset[str] = frozenset()
    duckdb: frozenset[str] = frozenset()
    sqlite: frozenset[str] = frozenset()


#: The read-only families, lower-case names.
FAMILIES: tuple[Family, ...] = (
    Family(
        "aggregate",
        _names("avg count max min sum string_agg array_agg bit_and bit_or bit_xor bool_and bool_or every any_value "
               "stddev stddev_pop stddev_samp variance var_pop var_samp corr covar_pop covar_samp regr_avgx regr_avgy "
               "regr_count regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy mode group_concat"),
        postgresql=_names("json_agg jsonb_agg json_object_agg jsonb_object_agg json_object_agg_strict "
                          "json_object_agg_unique json_object_agg_unique_strict jsonb_object_agg_strict "
                          "jsonb_object_agg_unique jsonb_object_agg_unique_strict json_agg_strict jsonb_agg_strict "
                          "range_agg range_intersect_agg xmlagg percentile_cont percentile_disc"),
        duckdb=_names("approx_count_distinct approx_quantile approx_top_k arbitrary arg_max arg_max_null arg_min "
                      "arg_min_null argmax argmin bitstring_agg count_if countif count_star entropy favg first fsum "
                      "histogram histogram_exact kahan_sum kurtosis kurtosis_pop last list listagg mad max_by mean "
                      "median min_by product quantile quantile_cont quantile_disc reservoir_quantile sem skewness "
                      "sumkahan geomean geometric_mean weighted_avg wavg json_group_array json_group_object "
                      "json_group_structure arg_max_nulls_last arg_min_nulls_last"),
        sqlite=_names("total json_group_array json_group_object jsonb_group_array jsonb_group_object median "
                      "percentile percentile_cont percentile_disc"),
    ),
    Family(
        "window",
        _names("row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value"),
    ),
    Family(
        "math",
        _names("abs cbrt ceil ceiling degrees exp factorial floor gcd lcm ln log log10 log2 mod pi power pow radians "
               "round sign sqrt trunc random acos asin atan atan2 cos cot sin tan sinh cosh tanh asinh acosh atanh "
               "isfinite"),
        postgresql=_names("div min_scale scale trim_scale width_bucket random_normal acosd asind atand atan2d cosd cotd "
                          "sind tand erf erfc"),
        duckdb=_names("bit_count even fmod gamma greatest_common_divisor least_common_multiple isinf isnan lgamma "
                      "nextafter round_even roundbankers signbit xor add subtract multiply divide fdiv equi_width_bins"),
    ),
    Family(
        "string",
        _names("ascii bit_length char_length character_length chr concat concat_ws format left length lower lpad "
               "ltrim md5 octet_length overlay position repeat replace reverse right rpad rtrim split_part "
               "starts_with strpos substr substring translate trim upper instr unicode hex unhex printf "
               "regexp_replace regexp_matches regexp_split_to_array regexp_split_to_table string_to_array "
               "sha256 encode decode to_hex initcap"),
        postgresql=_names("btrim initcap normalize is_normalized parse_ident quote_ident quote_literal quote_nullable "
                          "regexp_count regexp_instr regexp_like regexp_match regexp_substr string_to_table to_ascii "
                          "to_bin to_oct unistr casefold unicode_assigned similar_to_escape similar_escape like_escape "
                          "convert convert_from convert_to sha224 sha384 sha512 get_bit get_byte set_bit set_byte "
                          "bit_count crc32 crc32c textlen bpchar varchar text char"),
        duckdb=_names("array_to_string bar base64 bin contains damerau_levenshtein editdist3 ends_with from_base64 "
                      "from_binary from_hex hamming ilike_escape jaccard jaro_similarity jaro_winkler_similarity "
                      "lcase left_grapheme len length_grapheme levenshtein like_escape mismatches nfc_normalize "
                      "not_ilike_escape not_like_escape ord prefix regexp_escape regexp_extract regexp_extract_all "
                      "regexp_full_match right_grapheme sha1 split str_split str_split_regex string_split "
                      "string_split_regex strip_accents strlen substring_grapheme suffix to_base to_base64 "
                      "to_binary ucase url_decode url_encode format_bytes formatreadabledecimalsize "
                      "formatreadablesize parse_formatted_bytes md5_number md5_number_lower md5_number_upper hash "
                      "get_bit set_bit bit_position bitstring"),
        sqlite=_names("char glob like quote soundex zeroblob randomblob octet_length unistr unistr_quote "
                      "string_agg"),
    ),
    Family(
        "date/time",
        _names("age date_part date_trunc extract make_date make_time make_timestamp make_timestamptz now "
               "to_timestamp current_date current_time current_timestamp strftime timezone"),
        postgresql=_names("clock_timestamp date_add date_bin date_subtract isfinite justify_days justify_hours "
                          "justify_interval make_interval statement_timestamp timeofday transaction_timestamp "
                          "localtime localtimestamp overlaps date time timestamp timestamptz interval pg_sleep "
                          "pg_sleep_for pg_sleep_until"),
        duckdb=_names("century date_diff date_sub datediff datepart datesub datetrunc day dayname dayofmonth "
                      "dayofweek dayofyear decade epoch epoch_ms epoch_ns epoch_us era get_current_time "
                      "get_current_timestamp hour isodow isoyear julian last_day microsecond millennium "
                      "millisecond minute month monthname nanosecond quarter second strptime time_bucket "
                      "timezone_hour timezone_minute to_centuries to_days to_decades to_hours to_microseconds "
                      "to_millennia to_milliseconds to_minutes to_months to_quarters to_seconds to_weeks to_years "
                      "today transaction_timestamp try_strptime week weekday weekofyear year yearweek "
                      "make_timestamp_ms make_timestamp_ns current_localtime current_localtimestamp "
                      "normalized_interval date_add days_in_month ago"),
        sqlite=_names("date time datetime julianday unixepoch timediff"),
    ),
    Family(
        "JSON",
        _names("json_array json_array_length json_extract json_object json_quote json_type json_valid "
               "json_each json_tree json_insert json_remove json_replace json_set json_patch json_pretty "
               "to_json row_to_json array_to_json json_strip_nulls json_extract_path json_extract_path_text"),
        postgresql=_names("to_jsonb json_build_array jsonb_build_array json_build_object jsonb_build_object "
                          "jsonb_object json_array_elements jsonb_array_elements json_array_elements_text "
                          "jsonb_array_elements_text jsonb_array_length jsonb_each json_each_text jsonb_each_text "
                          "jsonb_extract_path jsonb_extract_path_text json_object_keys jsonb_object_keys "
                          "json_populate_record jsonb_populate_record json_populate_recordset "
                          "jsonb_populate_recordset json_to_record jsonb_to_record json_to_recordset "
                          "jsonb_to_recordset jsonb_strip_nulls jsonb_set jsonb_set_lax jsonb_insert "
                          "jsonb_path_exists jsonb_path_match jsonb_path_query jsonb_path_query_array "
                          "jsonb_path_query_first jsonb_path_exists_tz jsonb_path_match_tz jsonb_path_query_tz "
                          "jsonb_path_query_array_tz jsonb_path_query_first_tz jsonb_pretty json_typeof "
                          "jsonb_typeof jsonb_populate_record_valid json_scalar json_serialize"),
        duckdb=_names("from_json from_json_strict json json_contains json_deep_merge json_exists json_extract_string "
                      "json_keys json_merge_patch json_structure json_transform json_transform_strict json_value "
                      "json_normalize"),
        sqlite=_names("json jsonb jsonb_array jsonb_extract jsonb_insert jsonb_object jsonb_patch jsonb_remove "
                      "jsonb_replace jsonb_set json_error_position -> ->>"),
    ),
    Family(
        "array/list",
        _names("array_append array_cat array_length array_position array_prepend array_to_string cardinality "
               "unnest generate_series range array_reverse array_sort"),
        postgresql=_names("array_dims array_fill array_lower array_ndims array_positions array_remove array_replace "
                          "array_sample array_shuffle array_upper trim_array generate_subscripts"),
        duckdb=_names("aggregate apply array_aggr array_aggregate array_apply array_concat array_contains "
                      "array_cosine_distance array_cosine_similarity array_cross_product array_distance "
                      "array_distinct array_dot_product array_extract array_filter array_grade_up array_has "
                      "array_has_all array_has_any array_indexof array_inner_product array_intersect "
                      "array_negative_dot_product array_negative_inner_product array_pop_back array_pop_front "
                      "array_push_back array_push_front array_resize array_reverse_sort array_select array_slice "
                      "array_transform array_unique array_value array_where array_zip element_at filter flatten "
                      "grade_up list_aggr list_aggregate list_any_value list_append list_apply "
                      "list_approx_count_distinct list_avg list_bit_and list_bit_or list_bit_xor list_bool_and "
                      "list_bool_or list_cat list_concat list_contains list_cosine_distance list_cosine_similarity "
                      "list_count list_distance list_distinct list_dot_product list_element list_entropy "
                      "list_extract list_filter list_first list_grade_up list_has list_has_all list_has_any "
                      "list_histogram list_indexof list_inner_product list_intersect list_kurtosis "
                      "list_kurtosis_pop list_last list_mad list_max list_median list_min list_mode "
                      "list_negative_dot_product list_negative_inner_product list_pack list_position list_prepend "
                      "list_product list_reduce list_resize list_reverse list_reverse_sort list_select list_sem "
                      "list_skewness list_slice list_sort list_stddev_pop list_stddev_samp list_string_agg "
                      "list_sum list_transform list_unique list_value list_var_pop list_var_samp list_where "
                      "list_zip reduce generate_subscripts map map_concat map_contains map_contains_entry "
                      "map_contains_value map_entries map_extract map_extract_value map_from_entries map_keys "
                      "map_values struct_concat struct_contains struct_extract struct_extract_at struct_has "
                      "struct_indexof struct_insert struct_keys struct_pack struct_position struct_update "
                      "struct_values row union_extract union_tag union_value"),
    ),
    Family(
        "conditional",
        _names("coalesce nullif greatest least"),
        postgresql=_names("num_nulls num_nonnulls"),
        duckdb=_names("if constant_or_null error"),
        sqlite=_names("ifnull iif if likely unlikely likelihood"),
    ),
    Family(
        "type and format",
        _names("typeof to_char to_date to_number format_type pg_typeof"),
        postgresql=_names("pg_collation_for int2 int4 int8 float4 float8 numeric bool name "
                          "to_tsvector to_tsquery plainto_tsquery phraseto_tsquery websearch_to_tsquery ts_rank "
                          "ts_rank_cd ts_headline setweight strip numnode querytree tsvector_to_array "
                          "array_to_tsvector lower upper isempty lower_inc upper_inc lower_inf upper_inf range_merge "
                          "int4range int8range numrange daterange tsrange tstzrange gen_random_uuid "
                          "xmlcomment xmlconcat xmlpi xmlroot xmlexists xml_is_well_formed "
                          "xml_is_well_formed_document xml_is_well_formed_content xpath xpath_exists xmltext "
                          "current_database current_schema current_schemas version system_user"),
        duckdb=_names("can_cast_implicitly cast_to_type enum_code enum_first enum_last enum_range "
                      "enum_range_boundary gen_random_uuid get_type uuid uuidv4 uuidv7 uuid_extract_timestamp "
                      "uuid_extract_version make_type vector_type current_date current_database current_schema "
                      "current_catalog version"),
        sqlite=_names("sqlite_version sqlite_source_id subtype"),
    ),
    Family(
        "connection state",
        frozenset(),
        sqlite=_names("changes total_changes last_insert_rowid"),  # what this read-only connection changed: nothing
    ),
)

_REFUSED_ANYWAY = "goldeval never runs it in a judged query, even with --allow-function"

#: Names refused on every engine, even when allowed: ``(pattern, what it does)``.
_HARD: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    "postgresql": (
        (re.compile(r"pg_read_file\w*|pg_read_binary_file|pg_ls_\w+|pg_stat_file|pg_file_\w+|pg_logdir_ls"
                    r"|pg_current_logfile"), "reads server files or lists server folders"),
        (re.compile(r"lo_\w+|loread|lowrite|be_lo_\w+"), "works on large objects (lo_import / lo_export read and "
                                                          "write server files; lo_create writes)"),
        (re.compile(r"set_config"), "changes a setting (it could lift the time limit or the read-only transaction)"),
        (re.compile(r"pg_advisory\w*|pg_try_advisory\w*"), "takes a session lock that outlives the transaction"),
        (re.compile(r"nextval|setval|currval|lastval"), "uses a sequence (nextval and setval change it outside "
                                                        "the transaction)"),
        (re.compile(r"pg_terminate_backend|pg_cancel_backend|pg_reload_conf|pg_rotate_logfile\w*|pg_promote"
                    r"|pg_switch_wal|pg_create_restore_point|pg_backup_\w+|pg_start_backup|pg_stop_backup"
                    r"|pg_wal_replay_\w+|pg_log_backend_memory_contexts|pg_stat_reset\w*|pg_import_system_collations"
                    r"|binary_upgrade_\w+|pg_\w*replication_slot\w*|pg_replication_origin_\w+|pg_logical_\w+"
                    r"|pg_notify|pg_drop_\w+|pg_create_\w+"),
         "signals other sessions or administers the server"),
        (re.compile(r"dblink\w*|postgres_fdw\w*"), "connects to another server (it runs SQL there, or here again "
                                                   "outside the read-only transaction)"),
        (re.compile(r"query_to_xml\w*|query_to_xmlschema|cursor_to_xml\w*|cursor_to_xmlschema"),
         "runs SQL given as text, which goldeval cannot check"),
    ),
    "duckdb": (
        (re.compile(r"read_\w+|glob|sniff_csv|parquet_\w+|\w+_scan|\w+_scan_\w+|iceberg_\w+|delta_\w+"),
         "reads files (or lists them)"),
        (re.compile(r"query|query_table|json_execute_serialized_sql|json_deserialize_sql"),
         "runs SQL given as text, which goldeval cannot check"),
        (re.compile(r"getenv|getvariable|current_setting|duckdb_secrets|which_secret|duckdb_settings"),
         "reads the process environment, secrets or settings"),
        (re.compile(r"nextval|currval|setval"), "uses a sequence"),
        (re.compile(r"write_log|checkpoint|force_checkpoint|enable_\w+|disable_\w+|truncate_duckdb_logs"
                    r"|register_\w+|deregister_\w+|create_external_resource|destroy_external_resource"
                    r"|add_grammar_extension|remove_grammar_extension|load_extension|install_extension"),
         "changes the database or the process (logs, checkpoints, settings, extensions)"),
        (re.compile(r"(?:postgres|mysql|sqlite)_\w+"), "reaches another database or server"),
    ),
    "sqlite": (
        (re.compile(r"load_extension"), "loads code into the process"),
        (re.compile(r"fts3_tokenizer"), "returns or registers a C pointer"),
        (re.compile(r"readfile|writefile|edit|fsdir|lsdir|zipfile"), "reads or writes files"),
        (re.compile(r"sqlite_log"), "writes to the error log"),
    ),
}

_LISTED: dict[str, frozenset[str]] = {
    engine: frozenset().union(*(f.common | getattr(f, engine) for f in FAMILIES)) for engine in ENGINES
}

#: What a name given to ``--allow-function`` may look like: a function name, optionally ``schema.name``.
_ALLOWED_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*(?:\.[A-Za-z_][A-Za-z0-9_$]*)?$")


def allowed_names(engine: str) -> frozenset[str]:
    """Every function name *engine* may call without ``--allow-function`` (lower case; hard-refused names
    excluded).

    Raises:
        InputError: *engine* is not one of :data:`ENGINES`.
    """
    if engine not in _ALLOWED:
        raise InputError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}.")
    return _ALLOWED[engine]


def hard_refusal(engine: str, name: str) -> str | None:
    """Why *name* may never run on *engine*, even with ``--allow-function``; ``None`` when it is not such a name.

    Args:
        engine: One of :data:`ENGINES`.
        name: The function's name as the engine decodes it (any case: the check is case-insensitive, so that a
            differently cased spelling of a dangerous name is refused too).
    """
    low = name.lower()
    for pattern, what in _HARD.get(engine, ()):
        if pattern.fullmatch(low):
            return what
    return None


#: The listed names less the hard-refused ones, per engine (computed once: SQLite's authorizer asks per call).
_ALLOWED: dict[str, frozenset[str]] = {
    engine: frozenset(n for n in names if hard_refusal(engine, n) is None) for engine, names in _LISTED.items()
}


def normalize_allowed(names: Iterable[str] | None) -> tuple[str, ...]:
    """The ``--allow-function`` names, checked and in a stable order.

    Args:
        names: Function names (``name`` or ``schema.name``), as given; ``None`` or empty for none.

    Returns:
        The distinct names, sorted (so the run's recorded configuration does not depend on their order).

    Raises:
        InputError: a name that is not a function name (letters, digits, ``_``, ``$``; one optional
            ``schema.`` prefix).
    """
    out = set()
    for name in names or ():
        if not isinstance(name, str) or not _ALLOWED_NAME.match(name):
            raise InputError(f"--allow-function {name!r}: expected a function name (letters, digits, _), "
                             "optionally schema-qualified (schema.name). Give one name per --allow-function.")
        out.add(name)
    return tuple(sorted(out))


def function_refusal(engine: str, name: str, *, schema: str | None = None, allowed: Iterable[str] = (),
                     case_sensitive: bool = False) -> str | None:
    """Why a call of function *name* must not run on *engine*; ``None`` when it may.

    Args:
        engine: One of :data:`ENGINES`.
        name: The function's name as the engine decodes it (quotes and escapes already resolved).
        schema: The schema the call names (``None`` or ``""`` for an unqualified call). The caller decides which
            schemas are the engine's built-in ones and passes ``None`` for those.
        allowed: Extra names the user allowed (``--allow-function``): ``name`` matches an unqualified call,
            ``schema.name`` a call qualified so.
        case_sensitive: Compare names exactly (PostgreSQL: a quoted ``"ABS"`` is not the built-in ``abs``, and
            would find a user's function of that name); otherwise ignoring case (SQLite, DuckDB).

    Returns:
        ``None``, or the reason, a sentence fragment that reads after ``"refused: "``.
    """
    key = name if case_sensitive else name.lower()
    if not schema and key in _ALLOWED[engine]:  # the common case first: a listed built-in (never a hard-refused one)
        return None
    display = f"{schema}.{name}" if schema else name
    why = hard_refusal(engine, name)
    if why is not None:
        return f"the function {display}() {why}; {_REFUSED_ANYWAY}"
    extra = {a if case_sensitive else a.lower() for a in allowed}
    qualified = (display if case_sensitive else display.lower()) if schema else None
    if qualified is not None:
        if qualified in extra:
            return None
        return (f"the function {display}() is in schema {schema!r}, outside the engine's built-ins (it may be the "
                f"database's own code, which goldeval cannot check); if it only reads, allow it with "
                f"--allow-function {display}")
    if key in extra:
        return None
    return (f"the function {display}() is not on goldeval's list of read-only built-ins; if it only reads, allow it "
            f"with --allow-function {display}")
