"""Iterations per turn through the referee: bundled agents run as bot processes report
what their searches did with each turn (`turn.info`), and `maag match --json`, a
tournament's games and `maag bench iterations` show it. Real processes, real sockets; the
checks are on presence and plausibility against the budget, never on speed."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from maag.server.storage.tournaments import open_tournament_store


def maag(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "maag.server", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


def check_report(rep: Any, turn_ms: float) -> None:
    """A search report of a bundled search agent: some turns, iterations, and a search time
    per turn within the turn's budget (a message sent later would have been refused)."""
    assert rep is not None
    assert rep["turns"] >= 1
    assert rep["iterations_per_turn"] >= 1
    assert 0 < rep["time_ms_per_turn"] <= turn_ms


def test_match_json_reports_iterations_per_turn(tmp_path: Path) -> None:
    r = maag("match", "mcts", "random", "--games", "2", "--tc", "300ms", "--map", "a-tiny", "--json",
             "--db", str(tmp_path / "m.sqlite3"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    games, summary = lines[:-1], lines[-1]
    assert len(games) == 2
    for g in games:
        seat = [g["seat1"], g["seat2"]].index("mcts")
        check_report(g["search"][seat], 300)
        assert g["search"][1 - seat] is None  # the referee's own random bot reports nothing
    check_report(summary["search"]["mcts"], 300)
    turns = [g["search"][[g["seat1"], g["seat2"]].index("mcts")]["turns"] for g in games]
    assert summary["search"]["mcts"]["turns"] == sum(turns)
    assert summary["search"]["random"] is None
    # The replay keeps the per-message info and the per-seat report.
    db = sqlite3.connect(tmp_path / "m.sqlite3")
    for (data,) in db.execute("SELECT data FROM replays"):
        rp = json.loads(data)
        seat = [rp["tags"]["Seat1"], rp["tags"]["Seat2"]].index("mcts")
        check_report(rp["search"][seat], 300)
        infos = [e["info"] for e in rp["actions"] if "info" in e]
        assert infos and all(i["iterations"] >= 0 and "time_ms" in i for i in infos)


def test_tournament_games_carry_the_search_reports(tmp_path: Path) -> None:
    db = str(tmp_path / "t.sqlite3")
    out = tmp_path / "t.json"
    r = maag("tournament", "--bot", "greedy-turn", "--bot", "first", "--games-per-pair", "2",
             "--map", "a-tiny", "--tc", "200ms", "--db", db, "--out-json", str(out), "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    games = json.loads(out.read_text())["game_list"]
    assert len(games) == 2
    for g in games:
        seat = [g["seat1"], g["seat2"]].index("greedy-turn")
        check_report(g["search"][seat], 200)
        assert g["search"][1 - seat] is None


def test_a_tournament_database_of_an_older_maag_gains_the_search_column(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE tournaments (id TEXT PRIMARY KEY, spec TEXT NOT NULL, created TEXT NOT NULL);
        CREATE TABLE tournament_games (tournament TEXT NOT NULL, game_key TEXT NOT NULL,
            round INTEGER NOT NULL, seq INTEGER NOT NULL, seat0 TEXT NOT NULL, seat1 TEXT NOT NULL,
            seed BIGINT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL, game_id BIGINT,
            winner INTEGER, reason TEXT, updated TEXT NOT NULL, PRIMARY KEY (tournament, game_key));
        INSERT INTO tournaments VALUES ('t1', '{}', '2026-01-01');
        INSERT INTO tournament_games VALUES ('t1', 'r0g0', 0, 0, 'a', 'b', 5, 'done', 1, 3, 0, 'rules', 'x');
    """)
    db.close()
    store = open_tournament_store(path)
    try:
        (row,) = store.rows("t1")
        assert row.winner == 0 and row.search is None
    finally:
        store.close()


def test_bench_iterations_searches_the_referees_positions_again_in_process(tmp_path: Path) -> None:
    r = maag("bench", "iterations", "mcts", "--turn-ms", "100", "--games", "2", "--map", "a-tiny",
             "--positions", "12", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["agent"] == "mcts" and res["turn_ms"] == 100 and res["games"] == 2
    assert 1 <= res["positions"] <= 12
    for side in ("match", "in_process"):
        assert res[side]["mean_iterations_per_turn"] > 0
        assert 0 < res[side]["mean_search_ms_per_turn"] <= 2 * 100
    assert res["match"]["mean_search_ms_per_turn"] <= 100  # else the referee would have refused it
    for key in ("ratio", "time_ratio"):
        low, high = res[key + "_ci"]
        assert 0 < low <= res[key] <= high
    assert len(res["load"]) == 3


def test_bench_iterations_takes_stored_games_and_checks_their_time_control(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite3"
    r = maag("match", "mcts", "greedy-action", "--games", "1", "--tc", "100ms", "--map", "a-tiny",
             "--db", str(db), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    r = maag("bench", "iterations", "mcts", "--replays", str(db), "--turn-ms", "100", "--positions", "5",
             "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["games"] == 1 and 1 <= res["positions"] <= 5 and res["game_config"]["map"] == "a-tiny"
    wrong = maag("bench", "iterations", "mcts", "--replays", str(db), "--turn-ms", "250", cwd=tmp_path)
    assert wrong.returncode == 1 and "100ms" in wrong.stderr and "--turn-ms" in wrong.stderr
    nobody = maag("bench", "iterations", "oep", "--replays", str(db), "--turn-ms", "100", cwd=tmp_path)
    assert nobody.returncode == 1 and "no position where 'oep'" in nobody.stderr


def test_bot_search_reports_each_position_and_names_a_bad_line(tmp_path: Path) -> None:
    from maag.engine import Game

    obs = Game("heroes", {"map": "a-tiny"}).new_state(3).observation(0).to_json()
    good = {"game": "heroes", "config": {"map": "a-tiny"}, "observation": obs, "tag": 7}
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    r = maag("bot", "search", "mcts", "--positions", str(f), "--iterations", "300", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o["tag"] for o in out] == [7, 7] and all(o["iterations"] >= 300 and o["time_ms"] > 0 for o in out)
    f.write_text(json.dumps(good) + "\n" + json.dumps({"game": "heroes"}) + "\n")
    bad = maag("bot", "search", "mcts", "--positions", str(f), "--iterations", "300", cwd=tmp_path)
    assert bad.returncode == 2 and "line 2" in bad.stderr and len(bad.stdout.splitlines()) == 1
    none = maag("bot", "search", "mcts", "--positions", str(f), cwd=tmp_path)
    assert none.returncode == 2 and "--budget-ms or --iterations" in none.stderr


def test_a_bundled_bot_keeps_more_time_back_after_its_own_late_turn() -> None:
    import asyncio

    from maag.bots.runner import DEFAULT_MARGIN_MS, DEFAULT_TIME_USE, EASE_TURNS, MAX_EXTRA_MS, agent_bot
    from maag.clients import Limit
    from maag.clients._bot import GameInfo

    bot = agent_bot("mcts")()
    bot.game = GameInfo(game_id="g", game="heroes", seat=1, config={}, time_control={}, opponent="x")
    limit = Limit(time_left_ms=1000)
    assert bot.think_ms(limit) == (1000 - DEFAULT_MARGIN_MS) * DEFAULT_TIME_USE
    asyncio.run(bot.on_event("timeout", 2, None))  # the opponent's late turn changes nothing
    assert bot.think_ms(limit) == (1000 - DEFAULT_MARGIN_MS) * DEFAULT_TIME_USE
    kept = []
    for _ in range(6):
        asyncio.run(bot.on_event("timeout", 1, None))
        kept.append(1000 - bot.think_ms(limit) / DEFAULT_TIME_USE - DEFAULT_MARGIN_MS)
    assert kept[:3] == pytest.approx([DEFAULT_MARGIN_MS, 2 * DEFAULT_MARGIN_MS, 4 * DEFAULT_MARGIN_MS])
    assert max(kept) <= MAX_EXTRA_MS + 1e-9
    # A turn read a while ago has less left.
    later = Limit(time_left_ms=1000, received_at=time.monotonic() - 0.2)
    assert bot.think_ms(later) < bot.think_ms(limit)

    # Turns in time ease the extra margin again: halved every EASE_TURNS turns, then gone.
    def extra() -> float:
        return 1000 - bot.think_ms(limit) / DEFAULT_TIME_USE - DEFAULT_MARGIN_MS

    top = extra()
    for _ in range(EASE_TURNS - 1):
        bot._ease()
    assert extra() == pytest.approx(top)
    bot._ease()
    assert extra() == pytest.approx(top / 2)
    asyncio.run(bot.on_event("timeout", 1, None))  # late again: doubled, and the count starts over
    assert extra() == pytest.approx(min(MAX_EXTRA_MS, top))
    for _ in range(EASE_TURNS * 12):
        bot._ease()
    assert extra() == pytest.approx(0.0, abs=1e-6)
