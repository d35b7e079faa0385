"""The strike policy (maag.server.compete.strikes) and what a tournament does with it.

- `StrikePolicy.parse`: good texts and their normal form; bad texts refused with a message
  naming the rule and what is wrong;
- `struck` over verdict histories: only the last M games count, only verdicts of the rule's
  kind (or any kind for `any`), the first rule broken is the answer;
- `histories`: (seat 1, seat 2, verdict) triples become each bot's own verdicts, in order;
- the tournament's own reading (`formats.struck`): finished games only, in schedule order;
- a real `maag tournament` (nim, three bots, one of them a package whose process says hello
  and then aborts on its first turn) with `--strikes crash:2/3`: the package is taken out
  after its second crash, its remaining games are withdrawn and never played, every game of
  the other bots is played, and the standings and the game list say so; run again, the
  finished tournament gives the same answer and plays nothing more.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from maag.server.compete import formats
from maag.server.compete.strikes import DEFAULT_STRIKES, StrikePolicy, StrikeRule, histories
from maag.server.referee.session import VERDICTS
from maag.server.sandbox.check import sandbox_check
from maag.server.storage.base import open_storage
from maag.server.storage.tournaments import GameRow, ScheduledGame

# -- parse ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "rules", "normal"), [
    ("crash:3/10", [("crash", 3, 10)], "crash:3/10"),
    (" crash:3/10 , memory: 2 / 5 ", [("crash", 3, 10), ("memory", 2, 5)], "crash:3/10,memory:2/5"),
    ("any:1/1", [("any", 1, 1)], "any:1/1"),
    ("startup:4/4,protocol:1/100", [("startup", 4, 4), ("protocol", 1, 100)], "startup:4/4,protocol:1/100"),
    ("none", [], "none"),
    ("NONE", [], "none"),
    ("off", [], "none"),
    ("  ", [], "none"),
])
def test_parse_good(text: str, rules: list[tuple[str, int, int]], normal: str) -> None:
    p = StrikePolicy.parse(text)
    assert [(r.kind, r.count, r.window) for r in p.rules] == rules
    assert str(p) == normal
    assert StrikePolicy.parse(str(p)) == p  # the normal form reads back the same


def test_every_verdict_kind_is_a_rule_kind() -> None:
    for kind in VERDICTS:
        assert StrikePolicy.parse(f"{kind}:1/2").rules == (StrikeRule(kind, 1, 2),)
    assert str(StrikePolicy.parse(DEFAULT_STRIKES)) == DEFAULT_STRIKES


@pytest.mark.parametrize(("text", "message"), [
    ("crash", r"bad strike rule 'crash': use KIND:N/M"),
    ("crash:3", r"bad strike rule 'crash:3': use KIND:N/M"),
    ("crash:3/", r"bad strike rule 'crash:3/': use KIND:N/M"),
    ("crash:/10", r"bad strike rule 'crash:/10': use KIND:N/M"),
    ("crash:a/10", r"'crash:a/10': use KIND:N/M"),
    ("crash:-1/10", r"'crash:-1/10': use KIND:N/M"),
    ("crash:1.5/10", r"'crash:1.5/10': use KIND:N/M"),
    ("boom:1/2", r"bad strike rule 'boom:1/2': KIND is one of time, memory, crash, illegal, protocol, "
                 r"disconnect, startup or any"),
    ("resign:1/2", r"'resign:1/2': KIND is one of"),
    (":1/2", r"':1/2': KIND is one of"),
    ("crash:0/10", r"'crash:0/10': need 1 <= N <= M"),
    ("crash:5/3", r"'crash:5/3': need 1 <= N <= M"),
    ("crash:3/10,", r"bad strike rule '': use KIND:N/M"),
    ("crash:3/10,memory", r"bad strike rule 'memory': use KIND:N/M"),
    ("crash:3/10;memory:1/2", r"use KIND:N/M|KIND is one of"),
])
def test_parse_bad(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        StrikePolicy.parse(text)


# -- struck -----------------------------------------------------------------------------------

C, M, T = "crash", "memory", "time"


@pytest.mark.parametrize(("policy", "history", "rule"), [
    ("crash:2/3", [], None),
    ("crash:2/3", [C], None),
    ("crash:2/3", [C, C], "crash:2/3"),                       # fewer games than the window
    ("crash:2/3", [C, None, C], "crash:2/3"),
    ("crash:2/3", [C, None, None, C], None),                  # the first crash left the window
    ("crash:2/3", [C, None, None, C, None, C], "crash:2/3"),
    ("crash:2/3", [C, M, M], None),                           # other kinds do not count
    ("crash:2/3", [M, C, M, C], "crash:2/3"),
    ("crash:1/1", [C, None], None),                           # only the last game
    ("any:2/3", [C, None, M], "any:2/3"),                     # any kind counts
    ("any:2/3", [T, None, None], None),
    ("any:3/3", [T, M, C], "any:3/3"),
    ("crash:2/3,memory:1/5", [M, None, None], "memory:1/5"),
    ("crash:2/3,memory:1/5", [M, C, C], "crash:2/3"),       # the first rule broken
    ("memory:1/5,crash:2/3", [M, C, C], "memory:1/5"),
    ("none", [C] * 10, None),
    (DEFAULT_STRIKES, [T] * 10, None),                        # lost on time: the clock's business
    (DEFAULT_STRIKES, [C, "startup", None, "startup", M, "startup"], "startup:3/10"),
])
def test_struck(policy: str, history: list[str | None], rule: str | None) -> None:
    got = StrikePolicy.parse(policy).struck(history)
    assert (None if got is None else str(got)) == rule


RULES = st.lists(st.tuples(st.sampled_from([*VERDICTS, "any"]), st.integers(1, 4), st.integers(0, 4))
                 .map(lambda t: f"{t[0]}:{t[1]}/{t[1] + t[2]}"), min_size=1, max_size=3).map(",".join)
HISTORY = st.lists(st.sampled_from([None, None, None, C, M, T, "startup"]), max_size=30)


@given(RULES, HISTORY)
def test_struck_ever_is_struck_at_the_first_prefix_it_strikes(policy: str, history: list[str | None]) -> None:
    p = StrikePolicy.parse(policy)
    first = next((p.struck(history[:n]) for n in range(1, len(history) + 1)
                  if p.struck(history[:n]) is not None), None)
    assert p.struck_ever(history) == first
    if p.struck(history) is not None:  # struck now: struck ever
        assert first is not None


def test_histories() -> None:
    games: list[tuple[str, str, dict[str, Any] | None]] = [
        ("a", "b", {"seat": 2, "kind": C, "detail": "killed by SIGABRT"}),
        ("b", "a", {"seat": 1, "kind": M, "detail": "over 1GiB"}),
        ("a", "c", None),
        ("c", "b", {"seat": 1, "kind": T, "detail": ""}),
        ("b", "c", {}),  # an empty verdict: no forfeit
    ]
    assert histories(games) == {"a": [None, None, None], "b": [C, M, None, None], "c": [None, T, None]}
    p = StrikePolicy.parse("crash:1/4,memory:1/3")
    assert {b: str(r) for b, r in p.offenders(histories(games)).items()} == {"b": "crash:1/4"}
    p = StrikePolicy.parse("crash:1/3,memory:1/3")  # b's crash is four games back
    assert {b: str(r) for b, r in p.offenders(histories(games)).items()} == {"b": "memory:1/3"}
    assert p.offenders(histories(games), already=["b"]) == {}


def _rows(games: list[tuple[str, str, str, dict[str, Any] | None]]) -> list[GameRow]:
    out = []
    for i, (a, b, status, v) in enumerate(games):
        done = status == "done"
        out.append(GameRow(ScheduledGame(f"g{i}", 0, i, a, b, 7), status, 1, i + 1 if done else None,
                           (1 if v and v["seat"] == 1 else 0) if done else None,
                           "disconnect" if v else ("rules" if done else None), None, v))
    return out


def test_the_tournament_reads_finished_games_in_schedule_order() -> None:
    spec = formats.TournamentSpec("round-robin", (formats.BotSpec("x", None), formats.BotSpec("y", None)),
                                  extra=(("strikes", "crash:2/3"),))
    crash = {"seat": 1, "kind": C, "detail": ""}
    assert str(formats.strike_policy(spec)) == "crash:2/3"
    rows = _rows([("x", "y", "done", crash), ("y", "x", "withdrawn", None), ("x", "y", "claimed", None),
                  ("x", "y", "done", crash)])
    assert {b: str(r) for b, r in formats.struck(spec, rows).items()} == {"x": "crash:2/3"}
    # A crash that left the window (three finished games later) does not count.
    rows = _rows([("x", "y", "done", crash), ("y", "x", "done", None), ("x", "y", "pending", None),
                  ("y", "x", "done", None), ("x", "y", "done", crash)])
    assert formats.struck(spec, rows) == {}
    # Without `strikes` in its extras, a tournament has the default policy.
    plain = formats.TournamentSpec("round-robin", spec.bots)
    assert str(formats.strike_policy(plain)) == DEFAULT_STRIKES
    rows = _rows([("x", "y", "done", crash)] * 3)
    assert {b: str(r) for b, r in formats.struck(plain, rows).items()} == {"x": "crash:3/10"}


def test_struck_stays_struck_when_games_in_flight_finish_cleanly() -> None:
    """With games played at once, a bot's games in flight when it is struck out finish and
    count: clean ones push its crashes out of the window, but it stays struck out (its other
    games were withdrawn) and the standings keep saying so."""
    spec = formats.TournamentSpec("round-robin", (formats.BotSpec("x", None), formats.BotSpec("y", None)),
                                  games_per_pair=8, extra=(("strikes", "crash:2/3"),))
    crash = {"seat": 1, "kind": C, "detail": "killed by SIGABRT"}
    rows = _rows([("x", "y", "done", crash), ("x", "y", "done", crash),   # struck out here
                  ("y", "x", "done", None), ("x", "y", "done", None),      # in flight then: finished
                  ("y", "x", "withdrawn", None), ("x", "y", "withdrawn", None)])
    assert StrikePolicy.parse("crash:2/3").struck([C, C, None, None]) is None  # the window alone
    assert {b: str(r) for b, r in formats.struck(spec, rows).items()} == {"x": "crash:2/3"}
    table = {r["bot"]: r for r in formats.standings("t", spec, rows).table}
    assert table["x"]["withdrawn"] == "struck out (crash:2/3)" and table["y"]["withdrawn"] is None
    assert table["x"]["verdicts"] == {"crash": 2} and table["x"]["games"] == 4


# -- a real tournament ------------------------------------------------------------------------

CRASHER = '''\
"""Says hello, then aborts (SIGABRT) as soon as it is asked to act."""
import os

from maag.clients import Bot, TurnResult, run_bot_blocking


class Crasher(Bot):
    name = "crasher"
    want_legal = True
    games = ("nim",)

    def choose_turn(self, observation, limit):
        os.abort()
        return TurnResult([observation.legal[0]])


run_bot_blocking(Crasher, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
'''


@pytest.fixture(scope="module")
def sandbox_runs() -> None:
    """Packages run in bubblewrap's namespaces: missing, the test fails in CI and is skipped
    elsewhere (control groups are not needed: without them a crash is still a crash)."""
    missing = [f"{m.name}: {m.detail}" for m in sandbox_check() if m.required and not m.active]
    if missing:
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail("; ".join(missing))
        pytest.skip("; ".join(missing))


def test_a_crashing_package_is_struck_out_of_a_tournament(tmp_path: Path, sandbox_runs: None) -> None:
    pkg = tmp_path / "crasher"
    pkg.mkdir()
    (pkg / "maag-bot.toml").write_text('name = "crasher"\nrun = "python3 bot.py"\n')
    (pkg / "bot.py").write_text(CRASHER)
    db = tmp_path / "cup.sqlite3"
    args = [sys.executable, "-m", "maag.server", "tournament", "--game", "nim", "--bot", "random",
            "--bot", "greedy-action", "--bot", f"crasher={pkg}", "--games-per-pair", "4", "--tc", "200ms",
            "--strikes", "crash:2/3", "--db", str(db), "--out-json", str(tmp_path / "cup.json"), "--json"]
    r = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert "crasher struck out (crash:2/3): 6 game(s) withdrawn" in r.stderr
    table = {row["bot"]: row for row in summary["standings"]}
    assert table["crasher"]["verdicts"] == {"crash": 2}
    assert table["crasher"]["withdrawn"] == "struck out (crash:2/3)"
    assert (table["crasher"]["games"], table["crasher"]["losses"]) == (2, 2)
    for other in ("random", "greedy-action"):
        assert table[other]["verdicts"] == {} and table[other]["withdrawn"] is None
    assert table["random"]["games"] + table["greedy-action"]["games"] == 4 + 4 + 2
    assert (summary["games"], summary["scheduled"]) == (6, 12)

    doc = json.loads((tmp_path / "cup.json").read_text())
    assert doc["standings"] == summary["standings"]
    games = doc["game_list"]
    assert len(games) == 12
    mine = [g for g in games if "crasher" in (g["seat1"], g["seat2"])]
    others = [g for g in games if g not in mine]
    assert sorted(g["status"] for g in mine) == ["done"] * 2 + ["withdrawn"] * 6
    assert [g["status"] for g in others] == ["done"] * 4  # every game of the others is played
    for g in mine:
        if g["status"] == "done":  # lost by the crasher's seat, with the crash's verdict
            seat = 1 if g["seat1"] == "crasher" else 2
            assert g["winner"] == 3 - seat and g["reason"] == "disconnect"
            assert g["verdict"]["seat"] == seat and g["verdict"]["kind"] == "crash"
            assert "SIGABRT" in g["verdict"]["detail"]
        else:
            assert g["game_id"] is None and g["winner"] is None and g.get("verdict") is None
    for g in others:
        assert g["reason"] != "disconnect" and g.get("verdict") is None

    # The stored results carry the verdicts; no withdrawn game was ever started.
    st = open_storage(f"sqlite:///{db}")
    try:
        stored = st.list_games(limit=100)
    finally:
        st.close()
    assert len(stored) == 6 and all(g.status == "finished" for g in stored)
    crashed = [g for g in stored if "crasher" in g.seats]
    assert len(crashed) == 2
    for g in crashed:
        assert g.verdict is not None and g.verdict["kind"] == "crash"
        assert g.seats[g.verdict["seat"] - 1] == "crasher"

    # The same command again: the finished tournament plays nothing more, same standings.
    again = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(again.stdout.strip().splitlines()[-1])["standings"] == summary["standings"]
    st = open_storage(f"sqlite:///{db}")
    try:
        assert len(st.list_games(limit=100)) == 6
    finally:
        st.close()


def test_a_struck_package_plays_no_later_swiss_round(tmp_path: Path, sandbox_runs: None) -> None:
    """Swiss pairs every bot again each round (two bots: each other, every round): the games
    of a bot struck out in an earlier round are withdrawn before the new round is played,
    never started."""
    pkg = tmp_path / "crasher"
    pkg.mkdir()
    (pkg / "maag-bot.toml").write_text('name = "crasher"\nrun = "python3 bot.py"\n')
    (pkg / "bot.py").write_text(CRASHER)
    args = [sys.executable, "-m", "maag.server", "tournament", "--format", "swiss", "--rounds", "3",
            "--game", "nim", "--bot", "greedy-action", "--bot", f"crasher={pkg}", "--games-per-pair", "2",
            "--tc", "200ms", "--strikes", "crash:1/5", "--db", str(tmp_path / "swiss.sqlite3"),
            "--out-json", str(tmp_path / "swiss.json"), "--json"]
    r = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    games = json.loads((tmp_path / "swiss.json").read_text())["game_list"]
    assert sorted({g["round"] for g in games}) == [0, 1, 2] and len(games) == 6  # paired every round...
    done = [g for g in games if g["status"] == "done"]
    assert [g["key"] for g in done] == ["r0.p0-1.k0.g0"]  # ...but played only once
    assert done[0]["verdict"]["kind"] == "crash"
    assert [g["status"] for g in games if g is not done[0]] == ["withdrawn"] * 5
    table = {row["bot"]: row for row in json.loads(r.stdout.strip().splitlines()[-1])["standings"]}
    assert table["crasher"]["verdicts"] == {"crash": 1} and table["crasher"]["games"] == 1
    assert table["crasher"]["withdrawn"] == "struck out (crash:1/5)"
