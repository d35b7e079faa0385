"""`maag replay ID --show` over a real game of every game that has a text view: each action in
the game's words (GameSpec.describe, called with the state then the action) and the position
after each turn. (Conquest's describe once took its arguments the other way round, and the
command read the player to move from a JSON field only heroes and cards have.) The card
game's hidden hands: one seat's view must not show the other seat's hand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from maag.engine import registry

GAMES = [n for n in registry.names() if registry.get(n).render is not None]


def maag(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "maag.server", *args], capture_output=True, text=True,
                          timeout=timeout)


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


def test_a_card_game_from_the_full_record_and_from_one_seat(tmp_path: Path) -> None:
    """The card game after a real match: the full record shows both hands, one seat's view
    only its own."""
    db = str(tmp_path / "m.sqlite3")
    r = maag("match", "greedy-turn", "random", "--game", "cards", "--games", "1", "--tc", "30ms", "--db", db,
             "--seed", "4", timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    full = maag("replay", "1", "--db", db, "--show")
    assert full.returncode == 0, full.stderr
    lines = full.stdout.splitlines()
    assert lines[0] == "ply 1, seat 1 to act" or lines[0] == "ply 1, seat 2 to act"
    assert sum(line.startswith("  hand:") for line in lines[:8]) == 2  # the full record: both hands
    assert any("game over" in line for line in lines) and any(": end turn" in line for line in lines)
    seen = maag("replay", "1", "--db", db, "--show", "--observation", "1")
    assert seen.returncode == 0, seen.stderr
    block = seen.stdout.split("\n\n")[0].splitlines()
    assert sum(line.startswith("  hand:") for line in block) == 1  # only seat 1's own
