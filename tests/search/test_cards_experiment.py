"""`maag experiment cards` (lab/cards.py): the points of each table, a whole
small run through the command line (data file, markdown, plots), resuming an interrupted
run, and the thesis's move execution (a move that a draw made illegal ends randomly)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from maag.lab import cards
from maag.lab.arena import ArenaConfig, GameTask, play_game


def test_the_tables_have_the_thesis_points() -> None:
    assert [p.label for p in cards.points(["9.1"])] == list(cards.RANDOM_PLAYERS)
    assert [p.sims for p in cards.points(["9.2"])] == cards.SIMS_92
    t93 = cards.points(["9.3"], sims=[8, 32])
    assert {(p.series, p.sims) for p in t93} == {(post, n) for post in cards.POSTS_93 for n in (8, 32)}
    assert all(p.a_iter == p.b_iter for p in t93)
    assert len(cards.points(["9.4c", "9.4b"])) == 2 * 3 * 2 + 3 * 2
    with pytest.raises(ValueError, match="unknown table"):
        cards.points(["9.9"])


def maag(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "maag.server", "experiment", "cards", *args],
                          capture_output=True, text=True, timeout=600)


def test_a_small_run_resumes_and_reports(tmp_path: Path) -> None:
    data, md = tmp_path / "d.jsonl", tmp_path / "r.md"
    r = maag("--table", "9.1", "--table", "9.3", "--sims", "2,4", "--games", "2", "--data", str(data))
    assert r.returncode == 0, r.stderr[-3000:]
    lines = [json.loads(x) for x in data.read_text().splitlines()]
    assert len(lines) == (4 + 3 * 2) * 2
    assert {x["winner"] for x in lines} <= {"a", "b", None}
    for x in lines:
        assert x["moves"][0] >= 1 and x["turns"] > 0
        if x["key"].startswith("9.3"):
            assert x["iterations"] == [x["a_iter"]] * 2  # simulations per move, as asked
    # an interrupted file (a torn last line) and a second run: only the missing games are played
    data.write_text("\n".join(json.dumps(x) for x in lines[:-3]) + '\n{"key": "9.1|')
    r = maag("--table", "9.1", "--table", "9.3", "--sims", "2,4", "--games", "2", "--data", str(data),
             "--markdown", str(md), "--plots", str(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "3 games to play" in r.stderr
    assert len(cards.load(data)) == 10 and all(len(v) == 2 for v in cards.load(data).values())
    text = md.read_text()
    assert "§9.1" in text and "§9.3" in text and "| RMPmax | 2 |" in text
    assert (tmp_path / "results-cards-ucb-vs-uct.png").stat().st_size > 10_000
    r = maag("--report", "--data", str(data), "--plots", str(tmp_path / "new" / "folder"))
    assert r.returncode == 0 and "RMP (pruning)" in r.stdout
    assert (tmp_path / "new" / "folder" / "results-cards-ucb-vs-uct.png").exists()  # the folder is made


def test_bad_arguments_are_refused() -> None:
    for args, text in ((["--table", "9.9"], "unknown table"), (["--sims", "0"], "at least 1"),
                       (["--games", "0"], "at least 1")):
        r = maag(*args, "--report")
        assert r.returncode == 2 and text in r.stderr


def test_a_move_made_illegal_by_chance_ends_with_random_actions() -> None:
    """With on_illegal=rap no game is forfeited; with forfeit, a plan step that chance made
    illegal loses the game (both happen in the card game's real setting)."""
    base = ArenaConfig(turn_ms=None, iterations=None, game="cards", game_config=dict(cards.GAME_CONFIG),
                       view="observation", agent_iterations={"uct:c=1.4142": 20})
    forfeits = 0
    for i in range(12):
        task = GameTask(i, 0, 1, i % 2, 1000 + i)
        assert not play_game(task, ["rmpmax", "uct:c=1.4142"],
                             ArenaConfig(**{**base.__dict__, "on_illegal": "rap"})).forfeit
        forfeits += play_game(task, ["rmpmax", "uct:c=1.4142"], base).forfeit
    assert forfeits > 0
