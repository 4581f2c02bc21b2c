"""A throwaway PostgreSQL cluster for tests and benchmarks, from the machine's own binaries.

``pg_config --bindir`` says where ``initdb`` and ``pg_ctl`` are. The cluster
lives in a fresh temporary folder, listens on a Unix socket there only (no TCP
port to collide with), trusts local connections, and is stopped and removed by
:meth:`PostgresCluster.stop`. PostgreSQL refuses to run as root, so when the
caller is root (as CI is) the server runs as the ``postgres`` user through
``runuser``. Missing binaries raise :class:`PostgresUnavailable` with one line
saying what to install, never a skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

__all__ = ["PostgresCluster", "PostgresUnavailable", "pg_bindir"]

_PORT = 5432  # on a private socket folder, so it never collides


class PostgresUnavailable(RuntimeError):
    """The machine has no usable PostgreSQL server binaries."""


def pg_bindir() -> Path:
    """The folder holding ``initdb`` and ``pg_ctl``."""
    pg_config = shutil.which("pg_config")
    if pg_config is None:
        raise PostgresUnavailable(
            "pg_config not found: install the PostgreSQL server (Debian: apt-get install postgresql)"
        )
    bindir = Path(subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=True).stdout.strip())
    for tool in ("initdb", "pg_ctl"):
        if not (bindir / tool).exists():
            raise PostgresUnavailable(
                f"{bindir / tool} not found: install the PostgreSQL server (Debian: apt-get install postgresql)"
            )
    return bindir


class PostgresCluster:
    """One running server; ``url(db)`` gives a psycopg URL, ``create_database()`` a fresh database."""

    def __init__(self, *, durable: bool = False) -> None:
        self.durable = durable
        self.bindir = pg_bindir()
        self.root = Path(tempfile.mkdtemp(prefix="hermes-pg-"))
        self.data = self.root / "data"
        self.socket_dir = self.root / "sock"
        self.socket_dir.mkdir()
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            import pwd

            try:
                entry = pwd.getpwnam("postgres")
            except KeyError:
                shutil.rmtree(self.root, ignore_errors=True)
                raise PostgresUnavailable(
                    "running as root needs a 'postgres' user to run the server as; "
                    "install the postgresql package (it creates one)"
                ) from None
            for path in (self.root, self.socket_dir):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        self.user = "postgres" if self._as_postgres else os.environ.get("USER") or "postgres"
        self.started = False

    def _run(self, *args: str) -> None:
        command = [*(["runuser", "-u", "postgres", "--"] if self._as_postgres else []), *args]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise PostgresUnavailable(f"{Path(args[0]).name} failed: {(result.stderr or result.stdout).strip()[-500:]}")

    def start(self) -> PostgresCluster:
        self._run(
            str(self.bindir / "initdb"), "-D", str(self.data), "-U", self.user, "--auth=trust",
            "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync",
        )  # fmt: skip
        options = f"-k {self.socket_dir} -p {_PORT} -c listen_addresses='' -c max_connections=200"
        if not self.durable:  # tests: nothing here has to survive a power cut
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"), "-w", "-o", options, "start")
        self.started = True
        return self

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{self.user}@/{dbname}?host={self.socket_dir}&port={_PORT}"

    def create_database(self, name: str | None = None) -> str:
        """A new empty database; returns its URL."""
        import psycopg
        from psycopg import sql

        name = name or "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url(name)

    def stop(self) -> None:
        if self.started:
            try:
                self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
            finally:
                self.started = False
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PostgresCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
