"""The parser guard and the URL handling of ``--db postgresql://…`` (no server needed).

Every statement below is one the issue lists as refused before execution (goldeval issue 13, "Refused before
execution, by parsing"), or a known way around such a rule (data-modifying CTE, SELECT INTO, a second statement
hidden after a backslash that PostgreSQL does not treat as an escape, a schema-qualified or quoted function name).
"""

from __future__ import annotations

import pytest

from goldeval.answers.postgres import check_query, parse_url
from goldeval.answers.sql import QueryError
from goldeval.errors import InputError

REFUSED = {
    # more than one statement
    "two statements": "SELECT 1; DROP TABLE t",
    "backslash is not an escape": "SELECT 'a\\'; DROP TABLE t; --'",
    # transaction control
    "begin": "BEGIN",
    "commit": "COMMIT",
    "rollback": "ROLLBACK",
    "set transaction": "SET TRANSACTION READ WRITE",
    "default read only off": "SET default_transaction_read_only = off",
    "statement timeout off": "SET statement_timeout = 0",
    "reset all": "RESET ALL",
    "set_config": "SELECT set_config('statement_timeout', '0', false)",
    # writes, DDL, COPY
    "insert": "INSERT INTO t VALUES (1)",
    "update": "UPDATE t SET v = 'x'",
    "delete": "DELETE FROM t",
    "delete in a CTE": "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
    "insert in a CTE": "WITH d AS (INSERT INTO t VALUES (1) RETURNING *) SELECT * FROM d",
    "select into": "SELECT * INTO t2 FROM t",
    "for update": "SELECT * FROM t FOR UPDATE",
    "nextval": "SELECT nextval('s')",
    "create": "CREATE TABLE x (a int)",
    "create temp as": "CREATE TEMP TABLE x AS SELECT 1",
    "drop": "DROP TABLE t",
    "alter": "ALTER TABLE t ADD COLUMN z int",
    "truncate": "TRUNCATE t",
    "grant": "GRANT ALL ON t TO PUBLIC",
    "copy to program": "COPY t TO PROGRAM 'touch /tmp/goldeval-pwned'",
    "copy query to program": "COPY (SELECT 1) TO PROGRAM 'id'",
    "copy to file": "COPY t TO '/tmp/goldeval-out'",
    "copy from program": "COPY t FROM PROGRAM 'echo 1'",
    # roles
    "set role": "SET ROLE postgres",
    "set session authorization": "SET SESSION AUTHORIZATION postgres",
    "reset role": "RESET ROLE",
    # other servers, large objects, server files
    "dblink": "SELECT * FROM dblink('dbname=postgres', 'DELETE FROM t') AS x(a int)",
    "dblink_exec": "SELECT dblink_exec('dbname=postgres', 'DROP TABLE t')",
    "lo_import": "SELECT lo_import('/etc/passwd')",
    "lo_export": "SELECT lo_export(16384, '/tmp/goldeval-lo')",
    "lo_from_bytea": "SELECT lo_from_bytea(0, 'x')",
    "pg_read_file": "SELECT pg_read_file('/etc/passwd')",
    "qualified pg_read_file": "SELECT pg_catalog.pg_read_file('/etc/passwd')",
    "quoted pg_read_file": "SELECT \"pg_read_file\"('/etc/passwd')",
    "pg_read_binary_file": "SELECT pg_read_binary_file('/etc/passwd')",
    "pg_ls_dir": "SELECT * FROM pg_ls_dir('/')",
    "pg_stat_file": "SELECT pg_stat_file('/etc/passwd')",
    # the server's own state, and SQL given as text
    "terminate backend": "SELECT pg_terminate_backend(pg_backend_pid())",
    "reload conf": "SELECT pg_reload_conf()",
    "advisory lock": "SELECT pg_advisory_lock(1)",
    "query_to_xml": "SELECT query_to_xml('DELETE FROM t RETURNING *', true, true, '')",
    "notify fn": "SELECT pg_notify('c', 'x')",
    # statements that are not queries
    "do": "DO $$ BEGIN DELETE FROM t; END $$",
    "call": "CALL p()",
    "prepare": "PREPARE p AS DELETE FROM t",
    "execute": "EXECUTE p",
    "explain analyze": "EXPLAIN ANALYZE DELETE FROM t",
    "listen": "LISTEN c",
    "notify": "NOTIFY c",
    "vacuum": "VACUUM t",
    "lock": "LOCK TABLE t",
    "show": "SHOW ALL",
    "declare": "DECLARE c CURSOR FOR SELECT 1",
    "checkpoint": "CHECKPOINT",
    "discard": "DISCARD ALL",
    "does not parse": "SELECT FROM WHERE (",
}

ALLOWED = [
    "SELECT 1",
    "SELECT pg_sleep(0.1)",  # the time limit stops it
    "WITH x AS (SELECT 1 AS a) SELECT a FROM x",
    "SELECT a FROM t UNION SELECT b FROM u",
    "SELECT x FROM generate_series(1, 10) AS x",
    "VALUES (1), (2)",
    "SELECT 'DELETE FROM t; COPY t TO PROGRAM ''id'''",  # a string that spells a statement is a string
    "SELECT 1 -- DROP TABLE t",
    "SELECT 1;",
]


@pytest.mark.parametrize("sql", list(REFUSED.values()), ids=list(REFUSED))
def test_refused_by_the_parser(sql):
    with pytest.raises(QueryError, match="^refused: "):
        check_query(sql)


@pytest.mark.parametrize("sql", ALLOWED)
def test_plain_queries_pass_the_parser(sql):
    check_query(sql)  # raises QueryError when refused


def test_refusals_name_what_was_found():
    with pytest.raises(QueryError, match=r"function pg_read_file\(\)"):
        check_query("SELECT pg_catalog.pg_read_file('/etc/passwd')")
    with pytest.raises(QueryError, match="only one statement may run, got 2"):
        check_query("SELECT 1; DROP TABLE t")
    with pytest.raises(QueryError, match=r"SELECT … INTO"):
        check_query("SELECT * INTO t2 FROM t")
    with pytest.raises(QueryError, match="SET \\(a command\\)|SET"):
        check_query("SET ROLE postgres")


# --- every spelling of every forbidden family --------------------------------------------------------------------

#: One call of each forbidden family, as ``(name, arguments)``; ``{canary}`` is a server file's path and ``{pid}``
#: another session's process id (filled in by the server battery; any text parses here).
FORBIDDEN_CALLS = {
    "server files": [("pg_read_file", "'{canary}'"), ("pg_read_binary_file", "'{canary}'"), ("pg_ls_dir", "'.'"),
                     ("pg_stat_file", "'{canary}'")],
    "large objects": [("lo_import", "'{canary}'"), ("lo_export", "0, '/tmp/goldeval-lo'"), ("lo_create", "0"),
                      ("lo_from_bytea", "0, 'x'::bytea")],
    "settings": [("set_config", "'statement_timeout', '0', false")],
    "locks": [("pg_advisory_lock", "1")],
    "signals": [("pg_terminate_backend", "{pid}"), ("pg_cancel_backend", "{pid}"), ("pg_reload_conf", "")],
    "dblink": [("dblink_exec", "'dbname=battery', 'DELETE FROM t'"), ("dblink", "'dbname=battery', 'DELETE FROM t RETURNING 1'")],
}


def unicode_escaped(name: str, *, long: bool = False, escape: str = "\\") -> str:
    """*name* as a ``U&"…"`` identifier with every character escaped (``\\XXXX``, ``\\+XXXXXX``, or another
    escape character, given with ``UESCAPE``)."""
    body = "".join(f"{escape}+{ord(c):06x}" if long else f"{escape}{ord(c):04x}" for c in name)
    return f'U&"{body}"' + (f" UESCAPE '{escape}'" if escape != "\\" else "")


def spellings(name: str, args: str) -> dict[str, str]:
    """Every way the issue lists of calling *name*(*args*), each a whole query the server would run."""
    call = f"({args})"
    names = {
        "plain": name,
        "quoted": f'"{name}"',
        "pg_catalog.": f"pg_catalog.{name}",
        "quoted pg_catalog.": f'"pg_catalog"."{name}"',
        "U& \\XXXX": unicode_escaped(name),
        "U& \\+XXXXXX": unicode_escaped(name, long=True),
        "U& UESCAPE '!'": unicode_escaped(name, escape="!"),
        "pg_catalog.U&": "pg_catalog." + unicode_escaped(name),
        "comment before (": f"{name} /* a comment */ ",
        "line comment before (": f"{name} -- a comment\n",
        "mixed case U&": unicode_escaped(name[:1]) [:-1] + name[1:] + '"',
    }
    out = {f"{how}": f"SELECT {spelled}{call}" for how, spelled in names.items()}
    out["in FROM"] = f"SELECT * FROM {name}{call} AS f"
    out["in FROM, U&"] = f"SELECT * FROM {unicode_escaped(name)}{call} AS f"
    out["ROWS FROM"] = f"SELECT * FROM ROWS FROM (generate_series(1, 1), {name}{call}) AS f"
    out["in a sub-query"] = f"SELECT (SELECT {name}{call})"
    out["in EXISTS"] = f"SELECT 1 WHERE EXISTS (SELECT {unicode_escaped(name)}{call})"
    out["in a CTE"] = f"WITH c AS (SELECT {name}{call} AS v) SELECT * FROM c"
    out["in a set-operation branch"] = f"SELECT NULL UNION ALL SELECT {unicode_escaped(name, escape='!')}{call}"
    out["in ORDER BY"] = f"SELECT 1 ORDER BY {name}{call}"
    out["in a lateral join"] = f"SELECT * FROM (SELECT 1) a, LATERAL (SELECT {name}{call}) b"
    if args and "," not in args:
        out["field-selection notation"] = f"SELECT ({args}).{name}"
        out["field-selection notation, U&"] = f"SELECT ({args}).{unicode_escaped(name)}"
    return out


def forbidden_spellings(families=None) -> dict[str, tuple[str, str]]:
    """``{case id: (function name, query)}`` for every spelling of every forbidden call."""
    out = {}
    for family, calls in FORBIDDEN_CALLS.items():
        if families is not None and family not in families:
            continue
        for name, args in calls:
            for how, sql in spellings(name, args).items():
                out[f"{family}: {name}, {how}"] = (name, sql)
    return out


#: Casts to the reg* types that name functions: a look-up by text the guard cannot check.
FUNCTION_NAMING_CASTS = {
    "regproc": "SELECT 'pg_read_file'::regproc",
    "regprocedure": "SELECT CAST('pg_read_file(text)' AS regprocedure)",
    "pg_catalog.regprocedure": "SELECT 'pg_read_file(text)'::pg_catalog.regprocedure::oid",
    "regoperator in a sub-query": "SELECT (SELECT '+(int4,int4)'::regoperator)",
}


@pytest.mark.parametrize("name, sql", list(forbidden_spellings().values()), ids=list(forbidden_spellings()))
def test_every_spelling_of_a_forbidden_function_is_refused_by_its_decoded_name(name, sql):
    """The guard reads U&"…", quotes, pg_catalog., comments, FROM, sub-queries and field-selection notation as the
    server does, and names the function it decoded."""
    with pytest.raises(QueryError, match=rf"^refused: .*{name}\(") as err:
        check_query(sql.format(canary="/tmp/canary", pid=1))
    assert "even with --allow-function" in str(err.value)  # a dangerous name stays refused when allowed, too
    with pytest.raises(QueryError, match="^refused: "):
        check_query(sql.format(canary="/tmp/canary", pid=1), allowed_functions=[name, f"pg_catalog.{name}"])


def test_the_spellings_decode_to_the_name():
    """The spellings are real: PostgreSQL's parser reads each U& form as the plain name (else the test above could
    pass on names that merely look alike)."""
    from pglast import parse_sql

    for how in ("U& \\XXXX", "U& \\+XXXXXX", "U& UESCAPE '!'"):
        sql = spellings("pg_read_file", "'x'")[how]
        assert "pg_read_file" not in sql
        (stmt,) = parse_sql(sql)
        assert [s.sval for s in stmt.stmt.targetList[0].val.funcname] == ["pg_read_file"]


@pytest.mark.parametrize("sql", list(FUNCTION_NAMING_CASTS.values()), ids=list(FUNCTION_NAMING_CASTS))
def test_casts_to_function_naming_types_are_refused(sql):
    with pytest.raises(QueryError, match=r"^refused: a cast to reg\w+ names a function"):
        check_query(sql)


@pytest.mark.parametrize("sql, why", [
    ("SELECT public.sneaky()", r"function public.sneaky\(\) is in schema 'public'.*--allow-function public.sneaky"),
    ("SELECT sneaky()", r"function sneaky\(\) is not on goldeval's list of read-only built-ins; if it only reads, "
                        r"allow it with --allow-function sneaky"),
    ('SELECT "ABS"(-1)', r"function ABS\(\) is not on goldeval's list"),  # a quoted name is not the built-in abs
    ("SELECT current_setting('data_directory')", r"function current_setting\(\) is not on goldeval's list"),
    ("SELECT * FROM t TABLESAMPLE system_rows(3)", r"TABLESAMPLE system_rows is not a built-in sampling method"),
    ("SELECT 1 OPERATOR(public.+) 2", r"operator OPERATOR\(public.\+\) is outside pg_catalog"),
    ("SELECT 1 OPERATOR(public.=) ANY (SELECT 1)", r"operator OPERATOR\(public.=\) is outside pg_catalog"),
    ("SELECT 1 ORDER BY 1 USING OPERATOR(public.<)", r"operator OPERATOR\(public.<\) is outside pg_catalog"),
    ("SELECT ('x'::text).sneaky", r"\(…\).sneaky is read by PostgreSQL as a call of sneaky\(\)"),
    ("SELECT $1", r"ParamRef"),
    ("SELECT 1\x00; SELECT pg_read_file('x')", r"NUL character"),
])
def test_unknown_code_is_refused_with_its_name_and_how_to_allow_it(sql, why):
    with pytest.raises(QueryError, match="^refused: .*" + why):
        check_query(sql)


def test_a_listed_name_the_server_lacks_is_refused():
    """instr() is a SQLite and DuckDB built-in; on a server without it, the call would find the database's own."""
    check_query("SELECT instr('a', 'a')")  # no server at hand: the allowlist alone
    with pytest.raises(QueryError, match=r"^refused: the function instr\(\) is not a built-in of this server.*"
                                         r"--allow-function instr"):
        check_query("SELECT instr('a', 'a')", builtins={"abs", "strpos"})
    with pytest.raises(QueryError, match=r"^refused: \(…\).instr .*not a built-in of this server"):
        check_query("SELECT ('a').instr", builtins={"abs"})
    check_query("SELECT instr('a', 'a')", builtins={"abs"}, allowed_functions=["instr"])
    check_query("SELECT strpos('a', 'a'), count(*), coalesce(1, 2), trim(' a ')", builtins={"strpos", "count", "btrim"})


def test_a_column_that_merely_looks_like_a_forbidden_name_is_a_column_on_a_server():
    """t.f runs f(t) only when t has no column f; with the server's names known, a column lo_value is a column."""
    check_query("SELECT s.lo_value FROM s", builtins={"lo_import", "abs"})
    with pytest.raises(QueryError, match=r"^refused: x.lo_import is read by PostgreSQL as a call of lo_import\(x\)"):
        check_query("SELECT x.lo_import FROM s x", builtins={"lo_import", "abs"})


def test_an_allowed_function_runs_only_as_allowed():
    check_query("SELECT sneaky()", allowed_functions=["sneaky"])
    check_query("SELECT public.sneaky()", allowed_functions=["public.sneaky"])
    check_query("SELECT current_setting('TimeZone')", allowed_functions=["current_setting"])
    with pytest.raises(QueryError, match=r"public.sneaky\(\) is in schema 'public'"):
        check_query("SELECT public.sneaky()", allowed_functions=["sneaky"])  # allowing the bare name is not the schema's
    with pytest.raises(QueryError, match=r"other.sneaky\(\)"):
        check_query("SELECT other.sneaky()", allowed_functions=["public.sneaky"])


#: Ordinary read-only queries of every family: none may be refused.
HEALTHY = [
    "SELECT count(*), sum(x), avg(x), min(x), max(x), string_agg(s, ',' ORDER BY s), array_agg(DISTINCT x), "
    "bool_and(b), count(*) FILTER (WHERE x > 1), percentile_cont(0.5) WITHIN GROUP (ORDER BY x), "
    "mode() WITHIN GROUP (ORDER BY x), stddev(x), variance(x), corr(x, y) FROM t GROUP BY ROLLUP (a), CUBE (b)",
    "SELECT row_number() OVER w, rank() OVER w, dense_rank() OVER w, lag(x) OVER w, lead(x, 2, 0) OVER w, "
    "first_value(x) OVER w, ntile(4) OVER w, sum(x) OVER (PARTITION BY a ORDER BY b ROWS BETWEEN 1 PRECEDING AND "
    "CURRENT ROW) FROM t WINDOW w AS (PARTITION BY a ORDER BY b)",
    "SELECT extract(year FROM d), date_part('month', d), date_trunc('week', ts), d + interval '1 day', "
    "age(ts, '2020-01-01'), to_char(ts, 'YYYY-MM'), make_date(2020, 1, 2), now(), current_date, "
    "ts AT TIME ZONE 'UTC', (d, d + 1) OVERLAPS (d, d + 2), justify_days(interval '40 days') FROM t",
    "SELECT upper(s), lower(s), initcap(s), length(s), substring(s FROM 1 FOR 3), substr(s, 2), position('a' IN s), "
    "trim(both ' ' FROM s), btrim(s), concat(s, 'x'), concat_ws('-', s, s), s || 'x', replace(s, 'a', 'b'), "
    "split_part(s, ',', 1), regexp_replace(s, '[0-9]+', ''), regexp_match(s, 'a(b)'), left(s, 2), lpad(s, 5, '*'), "
    "format('%s-%s', s, x), md5(s), s LIKE 'a%', s ILIKE 'A%', s SIMILAR TO 'a%', s ~ '^a' FROM t",
    "SELECT json_build_object('a', x), to_jsonb(t), j -> 'a', j ->> 'a', j #>> '{a,b}', jsonb_array_length(j), "
    "jsonb_path_query_first(j, '$.a'), j @> '{}' FROM t, LATERAL jsonb_array_elements(j) AS e(v)",
    "SELECT ARRAY[1, 2] || 3, array_length(arr, 1), cardinality(arr), unnest(arr), arr[1], arr[1:2], "
    "array_to_string(arr, ','), 3 = ANY (arr) FROM t",
    "SELECT CASE WHEN x > 1 THEN 'big' WHEN x IS NULL THEN NULL ELSE 'small' END, coalesce(x, 0), nullif(x, 0), "
    "greatest(x, 1), least(x, 1), x IS DISTINCT FROM 1, x IS NOT NULL, b IS TRUE, x BETWEEN 1 AND 2, "
    "x IN (SELECT y FROM u), EXISTS (SELECT 1 FROM u WHERE u.y = t.x), x::text, CAST(x AS numeric(10, 2)), "
    "round(x::numeric, 2), abs(x), ceil(x), floor(x), sqrt(abs(x)), power(x, 2), mod(x, 3), x % 3, "
    "'t'::regclass, pg_typeof(x) FROM t",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT n FROM r",
    "WITH a AS MATERIALIZED (SELECT x FROM t) SELECT x FROM a INTERSECT SELECT y FROM u EXCEPT ALL SELECT 1",
    "SELECT DISTINCT ON (a) a, b FROM t ORDER BY a, b DESC NULLS LAST LIMIT 10 OFFSET 2",
    "SELECT * FROM t JOIN u ON t.x = u.y LEFT JOIN v USING (a) CROSS JOIN generate_series(1, 3) AS g(i) "
    "WHERE t.x > (SELECT avg(y) FROM u) ORDER BY t.x FETCH FIRST 5 ROWS WITH TIES",
    "SELECT * FROM t TABLESAMPLE bernoulli (10) REPEATABLE (1)",
    "SELECT t.x, s.public_col, (t.comp).field FROM t, public.s s",  # an allowlisted-or-field name after (…).
    "SELECT count(*) FROM information_schema.tables",
    "SELECT pg_sleep(0.1)",
    "VALUES (1, 'a'), (2, 'b')",
]


@pytest.mark.parametrize("sql", HEALTHY)
def test_ordinary_read_only_queries_pass(sql):
    if "(t.comp).field" in sql:
        with pytest.raises(QueryError, match=r"\(…\).field is read by PostgreSQL as a call of field\(\)"):
            check_query(sql)
        check_query(sql, allowed_functions=["field"])
        return
    check_query(sql)


@pytest.mark.parametrize("url, redacted, password", [
    ("postgresql://alice:s3cr%40t@db.example:5433/sales", "postgresql://alice@db.example:5433/sales", "s3cr@t"),
    ("postgresql://alice@db.example/sales?password=hunter2&sslmode=require", "postgresql://alice@db.example/sales?sslmode=require", "hunter2"),
    ("postgres://bob@127.0.0.1:5432/x", "postgres://bob@127.0.0.1:5432/x", None),
])
def test_the_password_is_split_out_of_the_url(url, redacted, password):
    t = parse_url(url)
    assert t.url == redacted
    assert t.password == password
    if password:
        assert password not in repr(t)


def test_a_url_libpq_cannot_read_is_refused_without_its_password():
    with pytest.raises(InputError, match="not a valid PostgreSQL URL") as err:
        parse_url("postgresql://alice:topsecret@host/db?nosuchoption=1")
    assert "topsecret" not in str(err.value)
