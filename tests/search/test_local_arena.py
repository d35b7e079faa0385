"""`maag arena`: the in-process round robin (schedule, scoring, intervals, command line)."""

from __future__ import annotations

import json

import pytest
from maag.lab.arena import ArenaConfig, run_arena, schedule
from maag.server.cli import main
from maag.stats import wilson


def test_schedule_balances_seats_and_mirrors_deals() -> None:
    tasks = schedule(3, 3, seed=5)  # 3 pairs, 3 games rounded up to 4
    assert len(tasks) == 3 * 4
    for a, b in [(0, 1), (0, 2), (1, 2)]:
        pair = [t for t in tasks if (t.a, t.b) == (a, b)]
        assert sorted(t.a_seat for t in pair) == [0, 0, 1, 1]
        seeds = [t.seed for t in pair]
        assert seeds[0] == seeds[1] and seeds[2] == seeds[3] and seeds[0] != seeds[2]


def test_wilson() -> None:
    lo, hi = wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-3) and hi == pytest.approx(0.5962, abs=1e-3)
    lo, hi = wilson(10, 10)
    assert hi == 1.0 and lo == pytest.approx(0.7225, abs=1e-3)
    assert wilson(0, 0) == (0.0, 1.0)


def test_round_robin_is_reproducible_with_iteration_budgets() -> None:
    cfg = ArenaConfig(turn_ms=None, iterations=50, game_config={"map": "a-tiny", "draws": "seeded"})
    specs = ["random", "greedy-action", "ne-mcts"]
    first = run_arena(specs, 2, cfg, seed=3)
    second = run_arena(specs, 2, cfg, seed=3)
    assert [(g.winner, g.turns) for g in first.games] == [(g.winner, g.turns) for g in second.games]
    for i in range(3):
        for j in range(3):
            if i != j:
                s_ij, n, (lo, hi) = first.score(i, j)
                s_ji, _, _ = first.score(j, i)
                assert n == 2 and s_ij + s_ji == pytest.approx(1.0) and lo <= s_ij <= hi
    assert not any(g.forfeit for g in first.games)


def test_command_line_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["arena", "random", "greedy-action", "--games", "2", "--turn-ms", "0", "--iterations", "1",
               "--map", "a-tiny", "--json"])
    assert rc == 0
    lines = capsys.readouterr().out.strip().splitlines()
    games = [json.loads(x) for x in lines[:-1]]
    summary = json.loads(lines[-1])
    assert len(games) == 2 and all(g["type"] == "game" for g in games)
    assert summary["type"] == "summary" and summary["agents"] == ["random", "greedy-action"]
    cell = summary["matrix"][1][0]
    assert cell["games"] == 2 and cell["wins"] + cell["draws"] + cell["losses"] == 2
    assert main(["arena", "random", "nosuchagent", "--games", "2"]) == 2


def test_agent_iterations_give_one_agent_its_own_budget(capsys: pytest.CaptureFixture[str]) -> None:
    """OEP's generations against EMCTS's genomes: each agent searches its own count."""
    rc = main(["arena", "oep:preset=paper", "emcts:preset=paper", "--games", "2", "--turn-ms", "0",
               "--iterations", "2", "--agent-iterations", "emcts:preset=paper=200", "--map", "a-tiny",
               "--json"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    per_turn = {a["agent"]: a["mean_iterations_per_turn"] for a in summary["overall"]}
    assert per_turn == {"oep:preset=paper": 2, "emcts:preset=paper": 200}
    for bad in ("emcts=0", "mcts=5", "emcts:preset=paper"):
        assert main(["arena", "oep", "emcts", "--iterations", "1", "--agent-iterations", bad]) == 2
