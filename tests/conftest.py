"""tests/: a real PostgreSQL for the storage and competition tests (the hypothesis profile
and the shared-data fixture are in the repository's conftest.py, for every test folder)."""

from __future__ import annotations

import os
from typing import Any

import pytest

# --- PostgreSQL (a real server: `.ci/postgres-start` starts one and prints its URL) --------

DEFAULT_POSTGRES = "postgresql://maag:maag@127.0.0.1:55432/maag_test"  # .ci/postgres-start's default


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The URL of a reachable PostgreSQL database whose user may create databases:
    $MAAG_TEST_POSTGRES, else .ci/postgres-start's default. Unreachable: the test fails when
    CI is set or the variable was given, and is skipped (saying why) otherwise."""
    import psycopg

    given = os.environ.get("MAAG_TEST_POSTGRES")
    url = given or DEFAULT_POSTGRES
    try:
        psycopg.connect(url, connect_timeout=10).close()
    except psycopg.Error as e:
        why = (f"PostgreSQL unreachable at {url} ({e}); start one with: "
               "export MAAG_TEST_POSTGRES=$(.ci/postgres-start)")
        if in_ci() or given:
            pytest.fail(why)
        pytest.skip(why)
    return url


@pytest.fixture
def postgres_db(postgres_url: str) -> Any:
    """A fresh, empty database for one test (dropped afterwards); yields its URL."""
    import uuid
    from urllib.parse import urlsplit

    import psycopg

    name = "maag_t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = urlsplit(postgres_url)._replace(path="/" + name).geturl()
    yield url
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Any) -> str:
    """A URL naming an empty database of each storage backend (backend.BACKENDS): the stores
    are tested on every one of them."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'maag.sqlite3'}"
    return str(request.getfixturevalue("postgres_db"))


class PrivatePostgres:
    """A PostgreSQL cluster of its own (started by .ci/postgres-start in a fresh
    directory on a free port), which the test may stop and start: what a database restart
    does to maag, without touching the shared test server."""

    def __init__(self) -> None:
        import secrets
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.dir = f"/var/tmp/maag-test-pg-{secrets.token_hex(6)}"
        self.env = {**os.environ, "MAAG_PG_DIR": self.dir, "MAAG_PG_PORT": str(self.port)}
        self.url = ""

    def start(self) -> None:
        import subprocess
        from pathlib import Path

        script = Path(__file__).resolve().parents[1] / ".ci" / "postgres-start"
        r = subprocess.run([str(script)], env=self.env, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"postgres-start failed: {r.stderr[-2000:]}")
        self.url = r.stdout.strip().splitlines()[-1]

    def _pg_ctl(self, *args: str) -> None:
        import glob
        import subprocess

        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
        cmd = [bins[-1] if bins else "pg_ctl", "-D", self.dir, *args]
        if os.getuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, capture_output=True, timeout=120, check=False)

    def stop(self) -> None:
        """A fast shutdown: every connection is cut, as in a restart."""
        self._pg_ctl("stop", "-m", "fast", "-w", "-t", "60")

    def destroy(self) -> None:
        import shutil

        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class PrivateDatabase:
    """One test's fresh database on a module's PrivatePostgres cluster: `url` names it;
    `stop` and `start` stop and start the whole cluster (a restart cuts every connection)."""

    def __init__(self, cluster: PrivatePostgres, url: str) -> None:
        self.cluster = cluster
        self.url = url

    def stop(self) -> None:
        self.cluster.stop()

    def start(self) -> None:
        self.cluster.start()


@pytest.fixture(scope="module")
def _private_cluster(postgres_url: str) -> Any:
    """A PrivatePostgres per test module: its initdb and first start (seconds) paid once,
    not per test (needs the PostgreSQL server binaries, like postgres_url)."""
    pg = PrivatePostgres()
    try:
        pg.start()
    except Exception as e:  # no server binaries here
        pg.destroy()
        if in_ci():
            pytest.fail(str(e))
        pytest.skip(str(e))
    yield pg
    pg.destroy()


@pytest.fixture
def private_postgres(_private_cluster: PrivatePostgres) -> Any:
    """A fresh, empty database of this test's own on a private cluster, running (a test
    before may have left the cluster stopped), which the test may stop and start."""
    import uuid
    from urllib.parse import urlsplit

    import psycopg

    cluster = _private_cluster
    cluster.start()  # (a running cluster is left as it is)
    name = "maag_p_" + uuid.uuid4().hex[:12]
    with psycopg.connect(cluster.url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield PrivateDatabase(cluster, urlsplit(cluster.url)._replace(path="/" + name).geturl())
    cluster.start()
    with psycopg.connect(cluster.url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
