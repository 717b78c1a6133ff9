"""``postgres_url``: a fresh PostgreSQL database for this test session, dropped at the end.

The server is, in order:

* ``ARENA_TEST_POSTGRES``, any PostgreSQL URL whose user may create databases. An address given
  there that does not answer fails the tests that need it: the harness never swaps in another
  server. ``ARENA_TEST_POSTGRES=start`` skips the search and starts a private server.
* a server on 127.0.0.1:5432 (user postgres, trust auth, as on our machines and CI);
* Testcontainers when a Docker engine is reachable;
* a private cluster from the PostgreSQL server package (``initdb`` and ``pg_ctl`` on PATH or under
  ``/usr/lib/postgresql/*/bin``) on a temporary directory and a free port, stopped at the end;
  run as the ``postgres`` user when the tests run as root, which PostgreSQL refuses to be.

With none of these, the tests that need PostgreSQL fail saying what to start (they skip only if a
developer sets ``ARENA_TEST_ALLOW_SKIP=1``, outside CI). The URL handed out is in SQLAlchemy's
async form, ``postgresql+asyncpg://postgres@127.0.0.1:5432/arena_test_<random>``.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import URL, make_url

from tests.harness.support import (
    docker_reachable,
    free_port,
    listening,
    require_listening,
    run_sync,
    unavailable,
)

VARIABLE = "ARENA_TEST_POSTGRES"
LOCAL_SERVER = "postgresql://postgres@127.0.0.1:5432/postgres"
HOW_TO_GET_ONE = (
    "start PostgreSQL on 127.0.0.1:5432 (user postgres, trust auth), set ARENA_TEST_POSTGRES to "
    "a server's URL, install the PostgreSQL server package (initdb, pg_ctl) or make a Docker "
    "engine reachable for Testcontainers"
)


def _asyncpg_dsn(url: URL) -> str:
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


async def _admin(server: URL, sql: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(_asyncpg_dsn(server))
    try:
        await connection.execute(sql)
    finally:
        await connection.close()


def server_binaries() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl``: PATH first, then the newest version the
    Debian and Ubuntu packages install (they keep them off PATH)."""
    on_path = shutil.which("initdb")
    if on_path and shutil.which("pg_ctl"):
        return Path(on_path).parent
    found = glob.glob("/usr/lib/postgresql/*/bin/initdb")
    newest = max(found, key=lambda p: int(Path(p).parts[-3]), default=None)
    return Path(newest).parent if newest else None


class LocalPostgres:
    """A private PostgreSQL cluster: initdb on a temporary directory, pg_ctl on a free port."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="arena-postgres-"))
        self.data = self.root / "data"
        # PostgreSQL refuses to run as root: then the server runs as the postgres user.
        self.user = _server_user()

    def _run(self, *argv: str) -> None:
        kwargs = {} if self.user is None else {"user": self.user.pw_uid, "group": self.user.pw_gid}
        done = subprocess.run(
            [str(self.bindir / argv[0]), *argv[1:]],
            capture_output=True,
            text=True,
            check=False,
            cwd=self.root,
            **kwargs,  # type: ignore[arg-type]
        )
        if done.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{argv[0]} failed: {done.stdout}{done.stderr}{tail}")

    def start(self) -> URL:
        if self.user is not None:
            os.chown(self.root, self.user.pw_uid, self.user.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "--no-sync")
        self.start_server()
        return make_url(f"postgresql://postgres@127.0.0.1:{self.port}/postgres")

    def start_server(self) -> None:
        """Start the cluster's server (again, after :meth:`stop_server`: an outage test)."""
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c full_page_writes=off -c max_connections=200"
        )
        log = str(self.root / "server.log")
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", log, "-o", options, "-w", "-t", "60", "start"
        )

    def stop_server(self) -> None:
        """Stop the server, keeping its data (``-m fast``: connections are cut, as in a crash
        of the host or a restart by an operator)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def stop(self) -> None:
        with contextlib.suppress(RuntimeError):
            if self.data.exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


def _server_user() -> pwd.struct_passwd | None:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise RuntimeError("running as root and neither a postgres nor a nobody user exists")


@contextlib.contextmanager
def postgres_server() -> Iterator[URL]:
    """A PostgreSQL server to create test databases on, found or started (see the module)."""
    given = os.environ.get(VARIABLE, "")
    if given and given != "start":
        server = make_url(given)
        require_listening("PostgreSQL", VARIABLE, server.host or "127.0.0.1", server.port or 5432)
        yield server
        return
    if not given and listening("127.0.0.1", 5432):
        yield make_url(LOCAL_SERVER)
        return
    if docker_reachable():
        from testcontainers.community.postgres import PostgresContainer

        with PostgresContainer("postgres:16-alpine", driver=None) as container:
            yield make_url(container.get_connection_url())
        return
    bindir = server_binaries()
    if bindir is None:
        unavailable(f"PostgreSQL: no server found or startable here; {HOW_TO_GET_ONE}")
    local = LocalPostgres(bindir)
    try:
        yield local.start()
    finally:
        local.stop()


#: The session's server, and the databases made on it (each dropped at the session's end).
_SESSION: dict[str, URL] = {}
_MADE: list[str] = []


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    with postgres_server() as server:
        _SESSION["server"] = server
        try:
            yield database_of_its_own()
        finally:
            drops = [f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)' for name in _MADE]
            _MADE.clear()

            async def drop_all() -> None:
                for drop in drops:
                    await _admin(server, drop)

            run_sync(drop_all)
            _SESSION.clear()


def database_of_its_own(postgres_url: str | None = None) -> str:
    """A new, empty database on the session's server (``postgres_url`` names the session's; pass
    it so that the server is up). A stack of services on topics of its own needs one: the
    projections keep their offsets by topic name, so a stack on another prefix in the same
    database would take an earlier stack's positions for its own and skip its records."""
    del postgres_url  # only asked for so that the fixture (the server) is set up first
    server = _SESSION["server"]
    name = f"arena_test_{secrets.token_hex(6)}"
    run_sync(lambda: _admin(server, f'CREATE DATABASE "{name}"'))
    _MADE.append(name)
    return server.set(drivername="postgresql+asyncpg", database=name).render_as_string(
        hide_password=False
    )


async def empty_postgres(url: str) -> None:
    """Drop everything earlier tests left in the session's database."""
    # Imported here: this plugin loads in every test session, most of which never touch SQL.
    from arena_runtime.sql import create_engine

    engine = create_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.execute(text("DROP SCHEMA public CASCADE"))
            await connection.execute(text("CREATE SCHEMA public"))
    finally:
        await engine.dispose()
