"""A throwaway PostgreSQL server for the tests (and for trying the README's Postgres example by hand).

``PostgresServer.start()`` runs ``initdb`` into a new temporary folder and ``pg_ctl start`` on a free loopback
port; ``stop()`` stops it and removes the folder (``stop(keep=True)`` keeps it, and ``restart()`` starts the server
again on the same data and port). ``initdb`` and ``pg_ctl`` refuse to run as root, so as root both
run as the unprivileged ``postgres`` user (created by the Debian package) through ``runuser``.

Host connections need a password (scram-sha-256), so the tests exercise the password paths for real; the
superuser's password is random per server.

    python tests/postgres/pgserver.py     # start one, print its superuser URL, stop it on Enter
    eval "$(python tests/postgres/pgserver.py start --dir /tmp/pg)"   # in the background: exports PGHOST, PGPORT, ...
    python tests/postgres/pgserver.py stop --dir /tmp/pg
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

#: Where the Debian packages put the server binaries; GOLDEVAL_PG_BIN overrides.
PG_BIN = Path(os.environ.get("GOLDEVAL_PG_BIN", "/usr/lib/postgresql/15/bin"))
SUPERUSER = "postgres"


def missing_reason() -> str | None:
    """Why no throwaway server can be started here, or ``None`` when one can."""
    for tool in ("initdb", "pg_ctl", "postgres"):
        if not (PG_BIN / tool).is_file():
            return f"PostgreSQL server binaries not found ({PG_BIN / tool} is absent; install postgresql-15, or set GOLDEVAL_PG_BIN)"
    if os.geteuid() == 0:
        try:
            import pwd

            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run initdb/pg_ctl as (they refuse root)"
        if shutil.which("runuser") is None:
            return "running as root and runuser is absent (initdb/pg_ctl refuse root)"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PostgresServer:
    """A running throwaway server: ``url()`` gives connection URLs on it."""

    port: int = 0
    password: str = field(default_factory=lambda: secrets.token_urlsafe(12))
    root: Path | None = None
    host: str = "127.0.0.1"
    owned: bool = True

    def url(self, db: str = "postgres", *, user: str = SUPERUSER, password: str | None = "") -> str:
        """``postgresql://user[:password]@127.0.0.1:port/db``; password ``""`` means the superuser's, ``None`` none."""
        pw = self.password if password == "" else password
        auth = user if pw is None else f"{user}:{pw}"
        return f"postgresql://{auth}@{self.host}:{self.port}/{db}"

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = list(args)
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, check=check, capture_output=True, text=True, timeout=120)

    def start(self) -> PostgresServer:
        # /tmp, not $TMPDIR: as root the server runs as `postgres`, which must reach the folder
        self.root = Path(tempfile.mkdtemp(prefix="goldeval-pg-", dir=os.environ.get("GOLDEVAL_PG_TMP", "/tmp")))
        data, pwfile = self.root / "data", self.root / "pw"
        pwfile.write_text(self.password + "\n")
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres")
            shutil.chown(pwfile, "postgres")
        os.chmod(self.root, 0o700)
        try:
            self._run(str(PG_BIN / "initdb"), "-D", str(data), "-U", SUPERUSER, f"--pwfile={pwfile}", "--auth-local=trust",
                      "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync")
        except subprocess.CalledProcessError as exc:
            raise RuntimeError(f"initdb failed: {exc.stderr or exc.stdout}") from None
        last = ""
        for _ in range(5):  # a free port can be taken between choosing it and binding it: try another
            self.port = free_port()
            last = self._pg_ctl_start()
            if not last:
                return self
        raise RuntimeError(f"pg_ctl start failed: {last}")

    def _pg_ctl_start(self) -> str:
        """Start the server on :attr:`port`; ``""`` when it runs, else the end of its log."""
        assert self.root is not None
        opts = (f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=off -c synchronous_commit=off "
                "-c full_page_writes=off -c max_connections=40 -c shared_buffers=32MB")
        r = self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.root / "data"), "-l", str(self.root / "log"), "-o", opts, "-w",
                      "-t", "60", "start", check=False)
        if r.returncode == 0:
            return ""
        return ((self.root / "log").read_text(errors="replace")[-2000:] if (self.root / "log").exists() else r.stderr) or "?"

    def restart(self) -> PostgresServer:
        """Start again a server stopped with ``stop(keep=True)``: the same data folder, port and password."""
        if self.root is None or not self.owned:
            raise RuntimeError("restart: no stopped server of this object to start again (stop(keep=True) keeps one)")
        last = self._pg_ctl_start()
        if last:
            raise RuntimeError(f"pg_ctl start (restart) failed: {last}")
        return self

    def stop(self, *, keep: bool = False, mode: str = "immediate") -> None:
        """Stop the server (``pg_ctl stop -m mode``) and remove its folder, or keep it for :meth:`restart`."""
        if self.root is None or not self.owned:
            return
        self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.root / "data"), "-m", mode, "-w", "stop", check=False)
        if not keep:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None


def from_environment() -> PostgresServer | None:
    """A server that ``.ci/run`` (or a developer) already started: ``GOLDEVAL_TEST_PG=postgresql://postgres:PW@HOST:PORT``."""
    url = os.environ.get("GOLDEVAL_TEST_PG")
    if not url:
        return None
    import urllib.parse

    u = urllib.parse.urlsplit(url)
    return PostgresServer(port=u.port or 5432, password=urllib.parse.unquote(u.password or ""), host=u.hostname or "127.0.0.1",
                          owned=False)


def _state_file(folder: str) -> Path:
    return Path(folder) / "pgserver.json"


def main(argv: list[str]) -> int:  # pragma: no cover - a manual helper, run by tests/e2e/test_readme_runs.py
    """``pgserver.py``: start one, print its superuser URL, stop it on Enter.
    ``pgserver.py start --dir DIR``: start one in the background and print ``export`` lines for a shell
    (``PGHOST``, ``PGPORT``, ``PGUSER``, ``PGPASSWORD``: what ``psql``, ``createdb`` and goldeval read), keeping what
    ``stop`` needs in DIR/pgserver.json. ``pgserver.py stop --dir DIR``: stop it and remove its data."""
    import argparse
    import json
    import shlex

    ap = argparse.ArgumentParser(description="a throwaway PostgreSQL server on loopback (random port and password)")
    ap.add_argument("action", nargs="?", choices=("start", "stop"), help="start in the background / stop one started so")
    ap.add_argument("--dir", help="folder that remembers the server between start and stop (created)")
    args = ap.parse_args(argv)
    why = missing_reason()
    if why:
        print(why, file=sys.stderr)
        return 2
    if args.action is None:
        srv = PostgresServer().start()
        print(srv.url(), flush=True)
        try:
            input("server running; press Enter to stop it\n")
        finally:
            srv.stop()
        return 0
    if not args.dir:
        ap.error(f"{args.action} needs --dir DIR")
    state = _state_file(args.dir)
    if args.action == "start":
        if state.exists():
            print(f"{state} exists: a server started there runs already (stop it first: pgserver.py stop --dir {args.dir})",
                  file=sys.stderr)
            return 2
        srv = PostgresServer().start()
        Path(args.dir).mkdir(parents=True, exist_ok=True)
        state.write_text(json.dumps({"port": srv.port, "password": srv.password, "root": str(srv.root), "host": srv.host}))
        os.chmod(state, 0o600)
        for key, value in (("PGHOST", srv.host), ("PGPORT", str(srv.port)), ("PGUSER", SUPERUSER), ("PGPASSWORD", srv.password)):
            print(f"export {key}={shlex.quote(value)}")
        print(f"# a throwaway PostgreSQL server runs on {srv.host}:{srv.port}; stop it with: "
              f"python tests/postgres/pgserver.py stop --dir {shlex.quote(args.dir)}")
        return 0
    if not state.exists():
        print(f"no server was started with --dir {args.dir} ({state} is absent)", file=sys.stderr)
        return 2
    saved = json.loads(state.read_text())
    PostgresServer(port=saved["port"], password=saved["password"], root=Path(saved["root"]), host=saved["host"]).stop()
    state.unlink()
    return 0


if __name__ == "__main__":  # pragma: no cover - a manual helper
    sys.exit(main(sys.argv[1:]))
