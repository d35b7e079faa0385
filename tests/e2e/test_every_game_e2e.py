"""Every registered game end to end, as a user runs it: `maag match --game NAME` (an
embedded referee over TCP, a bundled search agent and the referee's random bot as
processes) and `maag bot check --game NAME` (the bot kit, with `maag bot run` as the bot
under test). Parametrized over the registry: a new game is covered without a line here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from maag.engine import registry

MAAG = [sys.executable, "-m", "maag.server"]


@pytest.mark.parametrize("name", registry.names())
def test_a_match_of_every_game_through_the_referee(name: str, tmp_path: Path) -> None:
    r = subprocess.run([*MAAG, "match", "greedy-turn", "random", "--game", name, "--games", "2",
                        "--tc", "30ms", "--json", "--db", str(tmp_path / "m.sqlite3"), "--seed", "3"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["game"] == name and out["games"] == 2
    assert out["wins"] + out["draws"] + out["losses"] == 2


@pytest.mark.parametrize("name", registry.names())
def test_the_bot_kit_on_every_game(name: str) -> None:
    r = subprocess.run([*MAAG, "bot", "check", "--game", name, "--tc", "300ms", "--json", "--",
                        *MAAG, "bot", "run", "greedy-action"], capture_output=True, text=True, timeout=300)
    report = json.loads(r.stdout.strip().splitlines()[-1])
    assert r.returncode == 0 and report["ok"], report
    assert report["situations"] and all(s["ok"] for s in report["situations"])


def test_an_unknown_game_is_refused_by_the_command_line() -> None:
    r = subprocess.run([*MAAG, "match", "random", "random", "--game", "chess"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "invalid choice: 'chess'" in r.stderr


def test_the_conquest_agents_play_a_match_through_the_referee(tmp_path: Path) -> None:
    # The thesis's BB-MCTS against TripleA's Hard AI re-specified, both bot processes, real dice.
    db = tmp_path / "m.sqlite3"
    r = subprocess.run([*MAAG, "match", "conquest-bb-mcts", "conquest-hard", "--game", "conquest",
                        "--games", "2", "--tc", "100ms", "--json", "--db", str(db), "--seed", "5"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = [json.loads(line) for line in r.stdout.strip().splitlines()]
    games = [x for x in lines if x.get("event") == "game"]
    assert len(games) == 2 and all(g["reason"] in ("rules", "turn_limit") for g in games), games
    assert lines[-1]["wins"] + lines[-1]["draws"] + lines[-1]["losses"] == 2


def test_a_conquest_agent_refuses_another_game() -> None:
    r = subprocess.run([*MAAG, "match", "conquest-easy", "random", "--game", "heroes", "--games", "1",
                        "--tc", "50ms"], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "heroes" in r.stderr
