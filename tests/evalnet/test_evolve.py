"""`maag neat evolve` end to end at a tiny size through the command line: checkpoints, the
fitness history, the winner's network (usable as eval=neat:FILE) and the plot are written,
and a run resumed from a checkpoint goes on to the generations asked for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from maag.bots import make_agent
from maag.engine import Game
from maag.engine.evalnet import load_network

TINY = ["--map", "a-tiny", "--population", "4", "--games", "2", "--iterations", "10", "--final-games", "2"]


def maag(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-c", "import sys; from maag.server.cli import main; sys.exit(main())", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200"})


def test_evolve_writes_its_files_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = maag("neat", "evolve", "--out", str(out), "--generations", "2", *TINY)
    assert r.returncode == 0, r.stderr
    assert "generation 1: best" in r.stderr and "ETA" in r.stderr
    assert {p.name for p in out.iterdir()} == {"neat-checkpoint-1", "neat-checkpoint-2", "history.json",
                                               "winner.json", "fitness.png"}
    hist = json.loads((out / "history.json").read_text())["generations"]
    assert [h["generation"] for h in hist] == [0, 1]
    assert all(0.0 <= h["mean"] <= h["best"] <= 1.0 and h["genomes"] == 4 for h in hist)
    assert (out / "fitness.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    winner = json.loads((out / "winner.json").read_text())
    assert winner["metadata"]["game"] == "heroes" and winner["metadata"]["map"] == "a-tiny"
    assert winner["metadata"]["selection_games"] == 2 and 0 <= winner["metadata"]["selection_score"] <= 1
    assert r.stderr.count("final selection: genome") >= 4  # the 4 genomes of the last generation
    net = load_network(out / "winner.json")
    st = Game("heroes", {"map": "a-tiny", "draws": "seeded"}).new_state(seed=5)
    plan = make_agent("greedy-turn", f"eval=neat:{out / 'winner.json'}").plan(st, iterations=20, seed=1)
    assert plan[-1].to_dict() == {"type": "end_turn"} and net.n_inputs == 55

    r = maag("neat", "evolve", "--out", str(out), "--generations", "3", "--resume",
             str(out / "neat-checkpoint-2"), *TINY)
    assert r.returncode == 0, r.stderr
    assert "generation 2: best" in r.stderr and "generation 1:" not in r.stderr
    hist = json.loads((out / "history.json").read_text())["generations"]
    assert [h["generation"] for h in hist] == [0, 1, 2]
    assert (out / "neat-checkpoint-3").is_file()

    # resuming from an earlier checkpoint replays from there: history is cut back, not doubled
    r = maag("neat", "evolve", "--out", str(out), "--generations", "2", "--resume",
             str(out / "neat-checkpoint-1"), *TINY)
    assert r.returncode == 0, r.stderr
    assert [h["generation"] for h in json.loads((out / "history.json").read_text())["generations"]] == [0, 1]


@pytest.mark.parametrize("args, message", [
    (["--generations", "0"], "--generations must be at least 1"),
    (["--agent", "random"], "--agent must be a search agent that takes eval"),
    (["--agent", "mcts:eval=heuristic"], "--agent must not set eval"),
    (["--agent", "mcts:c=-1"], "parameter 'c'"),
    (["--resume", "/nonexistent/neat-checkpoint-3"], "no checkpoint file"),
    (["--population", "1"], "--population must be at least 2"),
    (["--final-games", "-1"], "--final-games must be at least 0"),
])
def test_evolve_refuses_bad_arguments(tmp_path: Path, args: list[str], message: str) -> None:
    r = maag("neat", "evolve", "--out", str(tmp_path / "x"), *args)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert not (tmp_path / "x").exists()


def test_speed_reports_both_evaluations(tmp_path: Path) -> None:
    """maag neat speed's shape (no figure is checked: it measures wall-clock speed)."""
    net = Path(__file__).resolve().parents[2] / "docs" / "data" / "neat-heroes-a-tiny.json"
    r = maag("neat", "speed", str(net), "--agents", "greedy-turn,mcts:c=0.5", "--states", "1",
             "--budget-ms", "5", "--map", "a-tiny", "--json")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [row["agent"] for row in rows] == ["greedy-turn", "mcts:c=0.5"]
    assert all(row["heuristic_ips"] > 0 and row["network_ips"] > 0 and row["states"] == 1 for row in rows)
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    r = maag("neat", "speed", str(bad))
    assert r.returncode == 2 and "network_type must be 'feedforward'" in r.stderr
