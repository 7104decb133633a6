"""A privileged PostgreSQL role is refused before the first query; ``--allow-privileged-role`` accepts it knowingly.

Privileged: a superuser, a member (directly or through other roles) of ``pg_read_server_files``,
``pg_write_server_files``, ``pg_execute_server_program`` or ``pg_write_all_data``, or a role that may write a table
(INSERT / UPDATE / DELETE / TRUNCATE granted to it, to a role it inherits, or to PUBLIC; or owned by it). The
read-only role of ``examples/sql/readonly_role.sql`` passes. With the opt-in the run goes on, records what was
accepted, and the query guard still refuses what it refuses.

Source: goldeval issue 25, item 2.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest

from goldeval.answers.postgres import READONLY_ROLE_SCRIPT, PostgresDatabase
from goldeval.answers.sql import QueryError
from goldeval.errors import InputError

from .conftest import RO_PASSWORD, RO_ROLE

DB = "roles"
SCRIPT = """
CREATE TABLE wards (ward_id int, name text, beds int);
INSERT INTO wards VALUES (1, 'Cardiology', 30), (2, 'Oncology', 24), (3, 'Surgery', 40);
CREATE TABLE audit (n int);
"""
PW = "role-test-pw-41"
#: Roles made for these tests (cluster-wide, so dropped afterwards), each with what makes it privileged.
OWNER, WRITER, VIA_ROLE, PUBLIC_WRITE, FILES, SELECT_ONLY, COLUMN, SU_MEMBER = (
    "gv_owner", "gv_writer", "gv_via_role", "gv_public_write", "gv_files", "gv_select_only", "gv_column", "gv_su_member")
GROUPS = ("gv_group_writer", "gv_group_files")

CASES = [
    {"id": "c1", "question": "How many beds does Oncology have?", "golden": {"kind": "value", "columns": ["beds"], "rows": [[24]]}},
    {"id": "c2", "question": "Read a server file", "golden": {"kind": "value", "columns": ["x"], "rows": [["x"]]}},
]
ATTEMPTS = [
    {"id": "c1", "final_query": "SELECT beds FROM wards WHERE name = 'Oncology'"},
    {"id": "c2", "final_query": "SELECT pg_read_file('/etc/passwd') AS x"},
]


@pytest.fixture(scope="module")
def roles(pg):
    pg.create_database(DB, SCRIPT)
    everyone = (OWNER, WRITER, VIA_ROLE, PUBLIC_WRITE, FILES, SELECT_ONLY, COLUMN, SU_MEMBER, *GROUPS)
    with pg.admin() as c:
        for r in everyone:
            c.execute(f"DROP ROLE IF EXISTS {r}")
        for r in (OWNER, WRITER, VIA_ROLE, PUBLIC_WRITE, FILES, SELECT_ONLY, COLUMN, SU_MEMBER):
            c.execute(f"CREATE ROLE {r} LOGIN PASSWORD '{PW}'")
            c.execute(f'GRANT CONNECT ON DATABASE "{DB}" TO {r}')
        for g in GROUPS:
            c.execute(f"CREATE ROLE {g} NOLOGIN")
        c.execute(f"GRANT gv_group_files TO {FILES}")  # a member through another role
        c.execute("GRANT pg_read_server_files TO gv_group_files")
        c.execute(f"GRANT gv_group_writer TO {VIA_ROLE}")
        c.execute(f"ALTER ROLE {SU_MEMBER} NOINHERIT")
        c.execute(f"GRANT postgres TO {SU_MEMBER}")  # not inherited: SET ROLE postgres would make it one
    with pg.admin(DB) as c:
        c.execute("GRANT USAGE ON SCHEMA public TO PUBLIC")
        c.execute("GRANT SELECT ON wards, audit TO PUBLIC")
        c.execute(f"CREATE TABLE owned (x int); ALTER TABLE owned OWNER TO {OWNER}")
        c.execute(f"GRANT UPDATE ON wards TO {WRITER}")
        c.execute(f"GRANT INSERT (n) ON audit TO {COLUMN}")  # one column only
        c.execute("GRANT DELETE ON wards TO gv_group_writer")
    yield pg
    with pg.admin(DB) as c:
        c.execute("DROP TABLE owned")
        c.execute("REVOKE ALL ON wards, audit FROM PUBLIC")
        for r in everyone:
            c.execute(f"DROP OWNED BY {r}")
    with pg.admin() as c:
        for r in everyone:
            c.execute(f"DROP ROLE IF EXISTS {r}")


def url_as(pg, role: str, *, password: str = PW) -> str:
    return pg.server.url(DB, user=role, password=password)


def test_the_superuser_is_refused_by_default_naming_the_readonly_role_script_and_the_opt_in(roles):
    with pytest.raises(InputError, match=r"role 'postgres' is privileged \(superuser\)") as err:
        PostgresDatabase(roles.url(DB))
    assert READONLY_ROLE_SCRIPT == "examples/sql/readonly_role.sql" and READONLY_ROLE_SCRIPT in str(err.value)
    assert "--allow-privileged-role" in str(err.value)
    assert roles.server.password not in str(err.value)


@pytest.mark.parametrize("role, found", [
    (OWNER, "may write public.owned (owner, INSERT, UPDATE, DELETE, TRUNCATE)"),
    (WRITER, "may write public.wards (UPDATE)"),
    (VIA_ROLE, "may write public.wards (DELETE)"),  # granted to a role it inherits
    (COLUMN, "may write public.audit (INSERT)"),  # on one column
    (FILES, "member of pg_read_server_files"),  # through gv_group_files
    (SU_MEMBER, "member of the superuser role postgres"),
])
def test_a_role_that_may_write_a_table_or_read_server_files_is_refused(roles, role, found):
    with pytest.raises(InputError, match="readonly_role.sql") as err:
        PostgresDatabase(url_as(roles, role))
    assert found in str(err.value)


def test_a_write_granted_to_public_makes_every_role_privileged(roles):
    with PostgresDatabase(url_as(roles, PUBLIC_WRITE)) as db:  # SELECT through PUBLIC only: accepted
        assert db.privileges == []
    with roles.admin(DB) as c:
        c.execute("GRANT INSERT ON audit TO PUBLIC")
    try:
        with pytest.raises(InputError, match=r"may write public\.audit \(INSERT\)"):
            PostgresDatabase(url_as(roles, PUBLIC_WRITE))
    finally:
        with roles.admin(DB) as c:
            c.execute("REVOKE INSERT ON audit FROM PUBLIC")


def test_the_readonly_role_and_a_select_only_role_are_accepted(roles):
    for url in (roles.url(DB, role="ro"), url_as(roles, SELECT_ONLY)):
        with PostgresDatabase(url) as db:
            assert db.privileges == []
            assert db.execute("SELECT beds FROM wards WHERE name = 'Oncology'").rows == [(24,)]
            assert "privileges" not in db.identity()  # nothing accepted: the identity is as before


def test_with_the_opt_in_the_superuser_is_accepted_recorded_and_the_guard_still_refuses(roles):
    with PostgresDatabase(roles.url(DB), allow_privileged=True) as db:
        assert db.privileges == ["superuser"]
        ident = db.identity()
        assert ident["role"] == "postgres" and ident["privileges"] == ["superuser"]
        assert db.execute("SELECT count(*) FROM wards").rows == [(3,)]
        for sql in ("SELECT pg_read_file('/etc/passwd')", "COPY wards TO PROGRAM 'id'", "DELETE FROM wards",
                    "SELECT set_config('default_transaction_read_only', 'off', false)"):
            with pytest.raises(QueryError, match="^refused: "):
                db.execute(sql)
    with roles.admin(DB) as c:
        assert c.execute("SELECT count(*) FROM wards").fetchone() == (3,)


@pytest.fixture()
def files(roles, tmp_path):
    cases, attempts = tmp_path / "cases.jsonl", tmp_path / "attempts.jsonl"
    cases.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    attempts.write_text("".join(json.dumps(a) + "\n" for a in ATTEMPTS))
    env = {**os.environ, "GOLDEVAL_HOME": str(tmp_path / "home")}
    env.pop("PGPASSWORD", None)
    return cases, attempts, env, tmp_path


def _judge(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "goldeval", "judge", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def test_cli_refuses_the_superuser_with_exit_2_and_records_nothing(files, roles):
    cases, attempts, env, tmp = files
    r = _judge(str(cases), str(attempts), "--db", roles.url(DB), env=env)
    assert r.returncode == 2, r.stderr
    assert "is privileged (superuser)" in r.stderr and "examples/sql/readonly_role.sql" in r.stderr
    assert "--allow-privileged-role" in r.stderr and "Traceback" not in r.stderr
    store = tmp / "home" / "goldeval.db"
    if store.exists():
        with sqlite3.connect(store) as con:
            assert con.execute("SELECT count(*) FROM runs").fetchone() == (0,)


def test_cli_with_the_opt_in_judges_as_the_superuser_records_it_and_still_refuses(files, roles):
    cases, attempts, env, tmp = files
    out = tmp / "results.json"
    r = _judge(str(cases), str(attempts), "--db", roles.url(DB), "--allow-privileged-role", "--out", str(out), env=env)
    assert r.returncode == 0, r.stderr
    results = json.loads(out.read_text())
    by_id = {c["id"]: c for c in results["per_example"]}
    assert by_id["c1"]["verdict"] == "match"
    assert by_id["c2"]["status"] == "unscored" and "refused" in by_id["c2"]["reason"]
    assert "root:" not in out.read_text()
    assert results["config"]["allow_privileged_role"] is True
    assert results["inputs"]["db_identity"]["privileges"] == ["superuser"]
    with sqlite3.connect(tmp / "home" / "goldeval.db") as con:
        (config, inputs), = con.execute("SELECT config, inputs FROM runs").fetchall()
    assert json.loads(config)["allow_privileged_role"] is True
    assert json.loads(inputs)["db"]["identity"]["privileges"] == ["superuser"]
    # the read-only role needs no flag, and its run records none
    out2 = tmp / "ro.json"
    r = _judge(str(cases), str(attempts), "--db", roles.url(DB, role="ro"), "--out", str(out2), env=env)
    assert r.returncode == 0, r.stderr
    ro = json.loads(out2.read_text())
    assert "allow_privileged_role" not in ro["config"] and "privileges" not in ro["inputs"]["db_identity"]
    assert RO_ROLE in ro["inputs"]["db"] and RO_PASSWORD not in out2.read_text()


def test_replay_refuses_the_superuser_by_default_and_accepts_it_with_the_opt_in(files, roles):
    cases, _, env, tmp = files
    reg = tmp / "judge-regressions.jsonl"
    reg.write_text(json.dumps({"id": "c1", "answer": {"id": "c1", "final_query": "SELECT beds FROM wards WHERE name = 'Oncology'"},
                               "verdict": "match", "reviewer": "ana"}) + "\n")
    args = [sys.executable, "-m", "goldeval", "replay", str(reg), "--cases", str(cases), "--db", roles.url(DB)]
    r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "examples/sql/readonly_role.sql" in r.stderr, r.stderr
    out = tmp / "replay.json"
    r = subprocess.run([*args, "--allow-privileged-role", "--out", str(out)], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["same"] == ["c1"]


@pytest.mark.parametrize("command", ["judge", "replay"])
def test_the_opt_in_without_a_postgresql_db_is_a_usage_error(tmp_path, command):
    ex = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "sql")
    args = ([os.path.join(ex, "cases.jsonl"), os.path.join(ex, "arm_a.jsonl")] if command == "judge"
            else [os.path.join(ex, "arm_a.jsonl"), "--cases", os.path.join(ex, "cases.jsonl")])
    r = subprocess.run([sys.executable, "-m", "goldeval", command, *args, "--db", os.path.join(ex, "clinic.sqlite"),
                        "--allow-privileged-role"], env={**os.environ, "GOLDEVAL_HOME": str(tmp_path)},
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "there is no role to accept" in r.stderr, r.stderr
