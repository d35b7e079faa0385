"""Settings for every test folder (tests/ and each game's own engine_c/games/<name>/tests/):
a deterministic hypothesis profile and the shared-data location."""

from __future__ import annotations

import os
import sys
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

# Every message the referee builds is checked as the constructor checks it (Message.built
# skips that outside the tests), here and in the servers the tests start as processes.
os.environ["MAAG_CHECK_MESSAGES"] = "1"
if "maag.protocol._messages" in sys.modules:  # imported before this file (a plugin): set it there too
    sys.modules["maag.protocol._messages"].check_built_messages(True)


def shared_dir() -> Path:
    """The shared folder with spec/ and conformance/: $MAAG_SHARED, else the repo's ../shared."""
    env = os.environ.get("MAAG_SHARED")
    return Path(env) if env else REPO.parent / "shared"


@pytest.fixture(scope="session")
def shared() -> Path:
    return shared_dir()


