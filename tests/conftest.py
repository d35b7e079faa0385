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
