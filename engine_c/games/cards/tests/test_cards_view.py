"""Watching a card game in a terminal: `maag replay ID --show` after a real match through the
referee (bots as processes), from the full record and from one seat's view, which must not
show the other seat's hand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cards_position import attack, minion, play, player, position, ref
from maag.engine.games.cards.view import describe, render

MAAG = [sys.executable, "-m", "maag.server"]


def test_a_position_and_actions_read_as_words() -> None:
    st = position(player(hand=["M08"], board=[minion("N24")]), p2=player("paladin", board=[minion("N01")]))
    text = render(st.to_json())
    assert "seat 1 mage" in text and "[Chillwind Yeti 4/5]" in text and "[Argent Squire 1/1 shield]" in text
    assert "Fireball (4)" in text
    js = st.to_json()
    assert describe(js, play(0, "M08", ref(2))) == "play Fireball (4) -> seat 2 hero"
    assert describe(js, attack(0, ref(2, 0))) == "attack with Chillwind Yeti -> seat 2 Argent Squire"
    assert describe(js, {"type": "end_turn"}) == "end turn"


def test_replay_show_after_a_match(tmp_path: Path) -> None:
    db = str(tmp_path / "m.sqlite3")
    r = subprocess.run([*MAAG, "match", "greedy-turn", "random", "--game", "cards", "--games", "1",
                        "--tc", "30ms", "--db", db, "--seed", "4"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    full = subprocess.run([*MAAG, "replay", "1", "--db", db, "--show"], capture_output=True, text=True,
                          timeout=120)
    assert full.returncode == 0, full.stderr
    lines = full.stdout.splitlines()
    assert lines[0] == "ply 1, seat 1 to act" or lines[0] == "ply 1, seat 2 to act"
    assert sum(line.startswith("  hand:") for line in lines[:8]) == 2  # the full record: both hands
    assert any("game over" in line for line in lines) and any(": end turn" in line for line in lines)
    seen = subprocess.run([*MAAG, "replay", "1", "--db", db, "--show", "--observation", "1"],
                          capture_output=True, text=True, timeout=120)
    assert seen.returncode == 0, seen.stderr
    block = seen.stdout.split("\n\n")[0].splitlines()
    assert sum(line.startswith("  hand:") for line in block) == 1  # only seat 1's own
