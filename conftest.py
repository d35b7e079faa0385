"""Settings for every test folder (tests/ and each game's own engine_c/games/<name>/tests/):
a deterministic hypothesis profile and the shared-data location."""

from __future__ import annotations

import os
from pathlib import Path

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

REPO = Path(__file__).resolve().parent


def shared_dir() -> Path:
    """The shared folder with spec/ and conformance/: $MAAG_SHARED, else the repo's ../shared."""
    env = os.environ.get("MAAG_SHARED")
    return Path(env) if env else REPO.parent / "shared"


@pytest.fixture(scope="session")
def shared() -> Path:
    return shared_dir()


