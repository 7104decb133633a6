"""A real PostgreSQL 15 server for the tests of ``--db postgresql://…``, started once per test session.

The ``pg`` fixture starts a throwaway server (``pgserver.PostgresServer``: initdb into a temporary folder,
pg_ctl on a free loopback port; as root through ``runuser -u postgres``), or uses the one named by
``GOLDEVAL_TEST_PG`` (a superuser URL). Without the server binaries every test here skips, with the reason.
CI (``.ci/run``) installs them, so there these tests run.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from . import pgserver

#: The read-only role the README recommends, and its password.
RO_ROLE, RO_PASSWORD = "goldeval_ro", "ro-secret-7f3a"


@dataclass
class PG:
    """The running server and what the tests set up on it."""

    server: pgserver.PostgresServer

    def url(self, db: str, *, role: str = "superuser", password: bool = True) -> str:
        """A URL for *db* as the superuser or the read-only role, with its password in it (or without)."""
        if role == "superuser":
            return self.server.url(db, password="" if password else None)
        return self.server.url(db, user=RO_ROLE, password=RO_PASSWORD if password else None)

    def admin(self, db: str = "postgres"):
        import psycopg

        return psycopg.connect(self.url(db), autocommit=True)

    def create_database(self, name: str, script: str | None = None) -> None:
        """A fresh database *name* (dropped first), *script* run in it, and SELECT on it granted to the read-only role."""
        with self.admin() as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            c.execute(f'CREATE DATABASE "{name}"')
            c.execute(f'GRANT CONNECT ON DATABASE "{name}" TO {RO_ROLE}')
        if script:
            with self.admin(name) as c:
                c.execute(script)
        self.grant_read(name)

    def grant_read(self, name: str) -> None:
        with self.admin(name) as c:
            c.execute(f"GRANT USAGE ON SCHEMA public TO {RO_ROLE}; GRANT SELECT ON ALL TABLES IN SCHEMA public TO {RO_ROLE}")


@pytest.fixture(scope="session")
def pg():
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[test]' installs it)")
    server = pgserver.from_environment()
    if server is None:
        why = pgserver.missing_reason()
        if why:
            pytest.skip(why)
        server = pgserver.PostgresServer().start()
    pg = PG(server)
    try:
        with pg.admin() as c:
            c.execute(f"DROP ROLE IF EXISTS {RO_ROLE}")
            # The role the README recommends: it can log in and read, nothing else; every transaction read-only.
            c.execute(f"CREATE ROLE {RO_ROLE} LOGIN PASSWORD '{RO_PASSWORD}' NOSUPERUSER NOCREATEDB NOCREATEROLE")
            c.execute(f"ALTER ROLE {RO_ROLE} SET default_transaction_read_only = on")
        yield pg
    finally:
        server.stop()
