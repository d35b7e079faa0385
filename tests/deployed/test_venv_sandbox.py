"""Hosted Python bots from a virtualenv install, whatever the hash seed.

The sandbox's PATH used to be built from the set {sys.prefix, sys.base_prefix}: from a
virtualenv, about half of maag's processes (by hash seed) put the base Python's bin first,
whose python3 lacks msgpack, and every SDK bot died at import with a `startup` forfeit. The
suite's own Python is not a virtualenv, so only a deployed install shows it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .conftest import REPO, Deployed, sandbox_usable

pytestmark = pytest.mark.timeout(600)

EXAMPLE = REPO / "examples" / "python-bot"


@pytest.fixture(autouse=True)
def _needs_sandbox() -> None:
    why = sandbox_usable()
    if why:
        pytest.skip(why)


def test_the_sandbox_path_puts_the_virtualenv_first(deployed: Deployed, host_dirs: tuple[Path, Path]) -> None:
    cwd, home = host_dirs
    code = ("from maag.server.hosting.api import sandbox_path; import sys; "
            "print(sandbox_path()); print(sys.prefix)")
    for seed in range(1, 7):
        r = subprocess.run([str(deployed.venv / "bin" / "python"), "-c", code], cwd=cwd,
                           env=deployed.env(home, PYTHONHASHSEED=str(seed)), capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        path, prefix = r.stdout.split()
        assert path.split(":")[0] == f"{prefix}/bin", (seed, path)


@pytest.mark.parametrize("seed", range(1, 7))
def test_the_example_python_bot_starts_in_the_sandbox(deployed: Deployed, host_dirs: tuple[Path, Path],
                                                      seed: int) -> None:
    cwd, home = host_dirs
    r = deployed.run(["match", str(EXAMPLE), "random", "--game", "nim", "--games", "2", "--json"], cwd=cwd,
                     home=home, PYTHONHASHSEED=str(seed))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    games = [g for g in lines if g.get("event") == "game"]
    assert len(games) == 2, r.stdout + r.stderr
    for g in games:
        # The example wins nim by Moore's rule: no forfeit, a win in every game.
        assert g["verdict"] is None, g
        seat = 0 if g["seat1"] == "python-example" else 1
        assert g["reason"] == "rules" and g["host"]["sandboxed"][seat] is True, g
    assert lines[-1]["wins"] == 2, lines[-1]
    # One id for a game: the hosted bot's log of each game is named by the stored game's id, in
    # the folder the match names at its end.
    logs = Path(lines[-1]["log_dir"])
    for g in games:
        seat = 1 if g["seat1"] == "python-example" else 2
        assert (logs / f"python-example-game{g['game_id']}-seat{seat}.log").is_file(), sorted(logs.iterdir())
    assert not list(logs.glob("*-start*")), sorted(logs.iterdir())
    # Nothing appears in the folder the host ran the command in.
    assert sorted(p.name for p in cwd.iterdir()) == []
