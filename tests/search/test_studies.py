"""Studies (`maag experiment NAME`, lab/study.py): every shipped declaration run
end to end at a tiny budget through the command line (data file, numbers, report and plot),
the file format's errors (line and reason, nothing played), and resuming a run killed in the
middle without playing any game twice. Nothing here is timed."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from maag.lab import study

SCORE = re.compile(r"(\d+)% \[(\d+)–(\d+)\](?: \(n=(\d+)\))?")


def maag(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "maag.server", "experiment", *args], capture_output=True,
                          text=True, timeout=900, cwd=cwd)


def test_the_shipped_studies_are_the_heroes_figures() -> None:
    names = study.shipped()
    for n in ("heroes-table2-100ms", "heroes-table2-1s", "heroes-table2-paper", "heroes-fig5", "heroes-time",
              "heroes-speed", "heroes-hidden"):
        assert n in names
    fig5 = study.load("heroes-fig5")
    assert fig5.sweep is not None and fig5.sweep.over == "ap"
    assert fig5.sweep.points[0] == 1 and fig5.sweep.points[-1] == 25
    assert {a.spec for a in fig5.agents} == {"oep", "ne-mcts", "bb-mcts", "mcts"}
    assert fig5.iterations and fig5.ms is None  # load does not change an iteration budget
    time_ = study.load("heroes-time")
    assert time_.sweep is not None and (time_.sweep.points[0], time_.sweep.points[-1]) == (10, 3000)
    assert time_.opponent is not None and time_.opponent.spec == "greedy-turn"
    # every pairing at every point has its own key; the deals are shared
    ps = study.pairings(fig5)
    assert len({p.key for p in ps}) == len(ps) == 4 * len(fig5.sweep.points)
    assert {p.options["ap"] for p in ps} == set(fig5.sweep.points)
    ts = study.tasks(fig5, games=4)
    assert len(ts) == 4 * len(ps) and len({t.seed for t in ts}) == 2


@pytest.mark.parametrize("name", study.shipped())
def test_a_shipped_study_runs_end_to_end_at_a_tiny_budget(name: str, tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    s = study.scaled(study.load(name), 0.001)
    r = maag(name, "--games", "2", "--budget-factor", "0.001", "--data", str(data), "--jobs", "2",
             "--report", str(tmp_path / "docs"))
    assert r.returncode == 0, r.stderr[-3000:]
    lines = [json.loads(x) for x in data.read_text().splitlines()]
    keys = {p.key for p in study.pairings(s)}
    assert len(lines) == 2 * len(keys)
    assert {d["key"] for d in lines} == keys
    # off a terminal, progress is a plain line (here the last game's, with nothing left)
    assert f"{len(lines)}/{len(lines)} games, " in r.stderr and "ETA 0:00:00" in r.stderr, r.stderr
    assert len({(d["key"], d["index"], d["seed"]) for d in lines}) == len(lines)
    for d in lines:
        assert d["winner"] in ("a", "b", None) and d["turns"] > 0 and d["study"] == name
        assert all(isinstance(x, float) and x >= 0 for x in d["iterations"])
    md = (tmp_path / "docs" / "studies" / f"{name}.md").read_text()
    assert md.startswith(f"# {s.title}") and "## Results" in md and f"{name}.png" in md
    assert f"`maag experiment {name} --games 2 --budget-factor 0.001`" in md
    cells = SCORE.findall(md)
    assert cells
    for score, lo, hi, n in cells:
        assert int(lo) <= int(score) <= int(hi) <= 100
        assert n in ("", "2")
    for label in [a.label for a in s.agents]:
        assert f"| {label} |" in md
    assert (tmp_path / "docs" / "studies" / f"{name}.png").stat().st_size > 10_000
    # the report alone, from the data, again
    r = maag("report", name, "--games", "2", "--budget-factor", "0.001", "--data", str(data), "--docs",
             str(tmp_path / "again"))
    assert r.returncode == 0, r.stderr[-3000:]
    assert (tmp_path / "again" / "studies" / f"{name}.md").read_text() == md


GOOD = """\
title = "a small study"
game = "heroes"
options = { map = "a-tiny" }
setting = "research"
format = "gauntlet"
games = 4
seed = 7
budget = { iterations = 30 }
sweep = { over = "ap", points = [1, 3] }

[[agents]]
label = "mcts"
spec = "mcts"

[[agents]]
label = "oep"
spec = "oep"
scale = 0.5

[opponent]
label = "greedy"
spec = "greedy-action"
"""


@pytest.mark.parametrize("old, new, line, reason", [
    ('games = 4', 'games = 0', 6, "games must be at least 1"),
    ('games = 4', 'games = "4"', 6, "games must be a int"),
    ('seed = 7', 'seed = 7\ncolour = "red"', 8, "unknown key 'colour'"),
    ('format = "gauntlet"', 'format = "league"', 5, "format must be one of"),
    ('setting = "research"', 'setting = "lab"', 4, "setting must be one of"),
    ('game = "heroes"', 'game = "chess"', 2, "unknown game 'chess'"),
    ('{ map = "a-tiny" }', '{ map = "a-tiny", colour = 1 }', 3, "heroes has no option 'colour'"),
    ('{ map = "a-tiny" }', '{ map = "z" }', 3, "map must be one of"),
    ('{ map = "a-tiny" }', '{ map = "a-tiny", draws = "random" }', 3, "draws follow from the setting"),
    ('points = [1, 3]', 'points = [1, 30]', 9, "heroes refuses"),
    ('points = [1, 3]', 'points = [1, 1]', 9, "points repeat"),
    ('over = "ap"', 'over = "colour"', 9, "a sweep is over ms, iterations or an option"),
    ('budget = { iterations = 30 }', 'budget = { iterations = 30, ms = 5 }', 8, "one of them"),
    ('budget = { iterations = 30 }', 'budget = { turns = 30 }', 8, "a budget is ms or iterations"),
    ('budget = { iterations = 30 }\n', '', None, "give a budget"),
    ('spec = "mcts"', 'spec = "mcts:c=banana"', 13, "agent 'mcts:c=banana'"),
    ('spec = "mcts"', 'spec = "nosuchagent"', 13, "agent 'nosuchagent'"),
    ('spec = "mcts"', 'spec = "cheat:mcts"', 13, "real setting only"),
    ('scale = 0.5', 'scale = -1', 18, "scale must be above 0"),
    ('scale = 0.5', 'speed = 2', 18, "unknown key 'speed' of an agent"),
    ('label = "oep"', 'label = "mcts"', 16, "two agents are labelled 'mcts'"),
    ('label = "greedy"', 'label = "greedy"\nfixed = true', 22, "a fixed agent needs its own budget"),
    ('[opponent]\nlabel = "greedy"\nspec = "greedy-action"\n', '', None, "opponent is missing"),
    ('title = "a small study"', 'title = "a small study', 1, "not valid TOML"),
    ('spec = "oep"', 'spec = "oep"\nspec = "mcts"', 18, "not valid TOML"),
])
def test_a_bad_file_is_refused_with_its_line_and_reason(old: str, new: str, line: int | None,
                                                        reason: str) -> None:
    assert old in GOOD
    study.parse(GOOD, "good")  # the unchanged file is fine
    with pytest.raises(study.StudyError) as e:
        study.parse(GOOD.replace(old, new, 1), "bad", "bad.toml")
    assert reason in e.value.reason, e.value
    assert e.value.line == line, e.value
    assert str(e.value).startswith(f"bad.toml:{line}: " if line else "bad.toml: ")


def test_the_command_refuses_a_bad_file_and_plays_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(GOOD.replace('spec = "mcts"', 'spec = "mcts:c=banana"'))
    data = tmp_path / "d.jsonl"
    r = maag("run", str(bad), "--data", str(data))
    assert r.returncode == 2 and f"{bad}:13: agent 'mcts:c=banana'" in r.stderr
    assert not data.exists()
    r = maag("run", "no-such-study", "--data", str(data))
    assert r.returncode == 2 and "no such study" in r.stderr and "heroes-fig5" in r.stderr
    r = maag("run", str(tmp_path / "good.toml"), "--budget-factor", "0")
    assert r.returncode == 2


def test_a_killed_run_goes_on_without_playing_a_game_twice(tmp_path: Path) -> None:
    f = tmp_path / "small.toml"
    f.write_text(GOOD.replace("games = 4", "games = 12"))
    data = tmp_path / "d.jsonl"
    s = study.load(str(f))
    total = len(study.tasks(s))
    assert total == 2 * 2 * 12
    proc = subprocess.Popen([sys.executable, "-m", "maag.server", "experiment", "run", str(f), "--data",
                             str(data)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if data.exists() and data.read_text().count("\n") >= 5:
                break
            assert proc.poll() is None, "the run ended before it was killed"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    before = data.read_text().splitlines()
    done = sum(1 for x in before if x.endswith("}"))
    assert 5 <= done < total
    r = maag("run", str(f), "--data", str(data))
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"{total - done} games to play" in r.stderr.replace("\n", " "), r.stderr
    records = [json.loads(x) for x in data.read_text().splitlines() if x.endswith("}")]
    assert len(records) == total
    assert len({(d["key"], d["index"], d["seed"]) for d in records}) == total  # no game played twice
    r = maag("run", str(f), "--data", str(data))
    assert r.returncode == 0 and "0 games to play" in r.stderr
    # more games add to the same pairings
    r = maag("run", str(f), "--data", str(data), "--games", "14")
    assert r.returncode == 0 and f"{2 * 2 * 2} games to play" in r.stderr


def test_games_run_on_a_dask_cluster(tmp_path: Path) -> None:
    from distributed import LocalCluster

    f = tmp_path / "small.toml"
    f.write_text(GOOD.replace("games = 4", "games = 2"))
    s = study.load(str(f))
    data = tmp_path / "d.jsonl"
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        played = study.run(s, data, dask=cluster.scheduler_address)
    assert played == len(study.tasks(s)) == 8
    cs = study.cells(s, data)
    assert all(c.games == 2 for c in cs)
    assert study.run(s, data) == 0
