"""`maag replay ID --show` over a real game of every game that has a text view: each action in
the game's words (GameSpec.describe, called with the state then the action) and the position
after each turn. (Conquest's describe once took its arguments the other way round, and the
command read the player to move from a JSON field only heroes and cards have.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from maag.engine import registry

GAMES = [n for n in registry.names() if registry.get(n).render is not None]


def maag(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "maag.server", *args], capture_output=True, text=True,
                          timeout=180)


@pytest.mark.parametrize("game", GAMES)
def test_replay_show_reads_a_whole_game(game: str, tmp_path: Path) -> None:
    db = str(tmp_path / "db.sqlite3")
    r = maag("match", "random", "first", "--game", game, "--games", "1", "--tc", "50ms", "--db", db, "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    r = maag("replay", "1", "--db", db, "--show")
    assert r.returncode == 0, r.stderr[-2000:]
    actions = [line for line in r.stdout.splitlines() if line.strip()[:1].isdigit() and " seat " in line]
    assert actions, r.stdout[:2000]
    assert "Traceback" not in r.stderr
