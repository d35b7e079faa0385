"""`maag experiment conquest` (lab/conquest.py): budgets, the tables it builds,
and a whole small run through the command line with its markdown and plot."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from maag.lab.conquest import parse_budget, run_table, tables


def test_budgets_read_times_and_thesis_iterations() -> None:
    assert parse_budget("84it").thesis_table == "1s" and parse_budget("420it").thesis_table == "5s"
    assert parse_budget("1s").turn_ms == 1000 and parse_budget("250ms").thesis_seconds == 0.25
    for bad in ("fast", "0it", "-1s", "5 minutes"):
        with pytest.raises(ValueError, match="like 1s, 250ms or 84it"):
            parse_budget(bad)


def test_hard_joins_the_tables_of_one_thesis_second_at_most() -> None:
    t = tables([parse_budget("84it"), parse_budget("5s")])
    assert t[0].agents == ["conquest-oep", "conquest-ne-mcts", "conquest-bb-mcts", "conquest-hard"]
    assert "conquest-hard" not in t[1].agents
    assert t[2].budget is None and t[2].agents == ["conquest-hard", "conquest-fast", "conquest-easy"]


def test_oep_gets_the_thesis_generations_under_an_iteration_budget() -> None:
    res = run_table(tables([parse_budget("84it")], baselines=False)[0], 2)
    oep, ne = res.agents.index("conquest-oep"), res.agents.index("conquest-ne-mcts")
    assert res.mean_iterations(oep) == 9 and res.mean_iterations(ne) == 84
    assert len(res.games) == 12 and not any(g.forfeit for g in res.games)


def test_a_small_run_through_the_command_line(tmp_path: Path) -> None:
    md, png = tmp_path / "t.md", tmp_path / "t.png"
    r = subprocess.run([sys.executable, "-m", "maag.server", "experiment", "conquest", "--budget", "8it",
                        "--games", "2", "--baseline-games", "2", "--json", "--markdown", str(md),
                        "--plot", str(png)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    summaries = [x for x in lines if "matrix" in x]
    assert [s["budget"] for s in summaries] == ["8it", None]
    assert sum(1 for x in lines if x.get("event") == "game") == 12 + 6
    assert "| OEP |" in md.read_text() and "thesis" not in md.read_text()  # 8it is no thesis budget
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = subprocess.run([sys.executable, "-m", "maag.server", "experiment", "conquest", "--budget", "soon"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "like 1s, 250ms or 84it" in bad.stderr
