"""Settings for every test folder (tests/ and each game's own engine_c/games/<name>/tests/):
a deterministic hypothesis profile, the shared-data location and the conformance traces in
it (`public_trace`, and the `trace` parameter: every trace file of every game)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
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


@pytest.fixture(scope="session")
def public_trace(shared: Path) -> Callable[[str], Path]:
    """The public trace file of a game (conformance/NAME-public.jsonl); the test fails when
    it is missing: the traces are required."""

    def path(game: str) -> Path:
        p = shared / "conformance" / f"{game}-public.jsonl"
        if not p.is_file():
            pytest.fail(f"{p} is missing: the conformance traces are required (set MAAG_SHARED to the "
                        f"folder holding conformance/{p.name})")
        return p

    return path


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test taking `trace` runs once per trace file (conformance/NAME-*.jsonl) of every
    registered game with a conformance replayer, given (game, path)."""
    if "trace" in metafunc.fixturenames:
        from maag.engine import registry
        from maag.engine.conformance import trace_files

        folder = shared_dir() / "conformance"
        pairs = [(name, path) for name in registry.names() if registry.get(name).conformance is not None
                 for path in trace_files(folder, name)]
        metafunc.parametrize("trace", pairs, ids=[path.name for _, path in pairs])
