"""Suite-wide settings: a deterministic hypothesis profile and the shared-data location."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# Deterministic property tests: the same examples on every run and machine, no example
# database, no per-example deadline (C calls under the sanitizer are slower).
settings.register_profile(
    "maag",
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("MAAG_HYPOTHESIS_PROFILE", "maag"))

REPO = Path(__file__).resolve().parent.parent


def shared_dir() -> Path:
    """The shared folder with spec/ and conformance/: $MAAG_SHARED, else the repo's ../shared."""
    env = os.environ.get("MAAG_SHARED")
    return Path(env) if env else REPO.parent / "shared"


@pytest.fixture(scope="session")
def shared() -> Path:
    return shared_dir()


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
