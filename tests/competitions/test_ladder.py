"""`maag ladder` with real bot processes that connect, get killed, and come back."""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from maag.server.compete.pairing import REMATCH_WEIGHT, choose_pairs
from maag.server.storage.base import GameRecord, open_storage

STUCK = 180.0  # seconds: a safety net against a hung test, not a timing requirement


def until(what: str, cond: Callable[[], bool], procs: list[subprocess.Popen[str]]) -> None:
    """Poll `cond` until it holds; fail if the ladder exited or nothing happens for STUCK s."""
    t0 = time.monotonic()
    while not cond():
        for p in procs[:1]:
            if p.poll() is not None:
                raise AssertionError(f"the ladder exited ({p.returncode}) while waiting for {what}: "
                                     f"{p.stderr.read() if p.stderr else ''}")
        if time.monotonic() - t0 > STUCK:
            raise AssertionError(f"stuck waiting for {what}")
        time.sleep(0.05)


def test_pairing_prefers_close_ratings_with_some_randomness() -> None:
    rng = random.Random(1)
    elo = {"a": 0.0, "b": 10.0, "c": 400.0, "d": 420.0}
    seen = []
    for _ in range(300):
        pairs = choose_pairs({"a": 1, "b": 1, "c": 1, "d": 1}, elo, {}, {}, rng, spread=100.0)
        assert len(pairs) == 2
        seen.append({frozenset(p) for p in pairs})
    close = sum(s == {frozenset("ab"), frozenset("cd")} for s in seen)
    # P(a picks b) = 1 / (1 + e^-4 + e^-4.2) = 0.967 per draw: mostly close, sometimes not.
    assert 0.88 * 300 < close < 300
    # Equal ratings: every opponent comes up; the previous opponent at a quarter of the weight.
    idle = {"a": 0.0, "b": 1.0, "c": 1.0, "d": 1.0}  # a has waited longest: a chooses
    four = {"a": 1, "b": 1, "c": 1, "d": 1}
    picks = [next(iter(set(p) - {"a"})) for _ in range(3000)
             for p in choose_pairs(four, {}, idle, {"a": "b"}, rng, 100.0, limit=1)]
    share_b = picks.count("b") / len(picks)
    expected = REMATCH_WEIGHT / (REMATCH_WEIGHT + 2)
    assert abs(share_b - expected) < 0.03 and picks.count("c") > 900 and picks.count("d") > 900


def test_pairing_respects_capacity_and_limit() -> None:
    rng = random.Random(2)
    for _ in range(200):
        pairs = choose_pairs({"a": 2, "b": 1, "c": 1, "z": 0}, {}, {}, {}, rng, 100.0)
        used = [x for p in pairs for x in p]
        assert all(p[0] != p[1] for p in pairs) and "z" not in used
        assert used.count("a") <= 2 and used.count("b") <= 1 and used.count("c") <= 1
        assert len(pairs) == 2  # a-b and a-c: all capacity used
    assert len(choose_pairs({"a": 5, "b": 5}, {}, {}, {}, rng, 100.0, limit=3)) == 3
    assert choose_pairs({"a": 3}, {}, {}, {}, rng, 100.0) == []
    # The bot that has waited longest chooses first (it is in the first pair).
    idle = {"a": 5.0, "b": 4.0, "c": 1.0}
    assert "c" in choose_pairs({"a": 1, "b": 1, "c": 1}, {}, idle, {}, rng, 100.0)[0]


def ladder_games(db: str) -> list[GameRecord]:
    st = open_storage(db)
    try:
        return sorted(st.list_games(match_id="ladder:main", limit=10**6), key=lambda g: g.id)
    finally:
        st.close()


def test_ladder_keeps_scheduling_while_bots_come_and_go(tmp_path: Path,
                                                        procs: list[subprocess.Popen[str]]) -> None:
    db = str(tmp_path / "ladder.sqlite3")
    tokens = {}
    for name in ("alice", "bob", "carol"):
        r = subprocess.run([sys.executable, "-m", "maag.server", "bot", "add", name, "--db", db],
                           capture_output=True, text=True, check=True)
        tokens[name] = r.stdout.strip().splitlines()[-1]
    port_file = tmp_path / "port"
    html = tmp_path / "ladder.html"
    ladder = subprocess.Popen(
        [sys.executable, "-m", "maag.server", "ladder", "--db", db, "--port", "0",
         "--port-file", str(port_file), "--map", "a-tiny", "--tc", "10s", "--grace", "300ms",
         "--per-bot", "1", "--max-games", "16", "--seed", "3", "--out-html", str(html), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    procs.append(ladder)
    until("the port file", lambda: port_file.exists() and port_file.read_text().strip() != "", procs)
    port = int(port_file.read_text())

    def bot(name: str, agent: str = "random", concurrency: int = 1) -> subprocess.Popen[str]:
        p = subprocess.Popen([sys.executable, "-m", "maag.server.net.minibot",
                              "--connect", f"127.0.0.1:{port}",
                              "--token", tokens[name], "--agent", agent, "--concurrency", str(concurrency),
                              "--name", name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             text=True)
        procs.append(p)
        return p

    def finished(pred: Callable[[GameRecord], bool] = lambda g: True) -> int:
        return sum(1 for g in ladder_games(db) if g.status == "finished" and pred(g))

    # alice offers two slots, but the ladder lets her play one game at a time (--per-bot 1).
    bot("alice", concurrency=2)
    bob = bot("bob", agent="first")
    until("3 games of alice and bob", lambda: finished() >= 3, procs)
    os.kill(bob.pid, signal.SIGKILL)  # bob vanishes (maybe mid-game: he forfeits after the grace)
    bob.wait()
    carol = bot("carol")
    until("a game of alice and carol", lambda: finished(lambda g: "carol" in g.seats) >= 1, procs)
    carol.terminate()
    carol.wait()
    last_carol = max(g.id for g in ladder_games(db) if "carol" in g.seats)
    bot("bob", agent="first")  # bob comes back with the same token
    out, err = ladder.communicate(timeout=STUCK)
    assert ladder.returncode == 0, err

    games = ladder_games(db)
    done = [g for g in games if g.status == "finished"]
    assert len(done) == 16
    # A game paired just as bob vanished is stored aborted before its first ply and does not
    # count; nothing else is ever left unfinished.
    assert all(g.status == "aborted" and g.plies == 0 for g in games if g.status != "finished"), games
    # Everyone played; bob's games straddle his absence; nobody played himself.
    assert {x for g in done for x in g.seats} == {"alice", "bob", "carol"}
    assert any("bob" in g.seats and g.id > last_carol for g in done)
    assert all(g.seats[0] != g.seats[1] for g in done)
    # No bot was ever in two ladder games at once (per-bot limit 1): each bot's games, in the
    # order they started, each start after the previous one was stored.
    for name in ("alice", "bob", "carol"):
        mine = [g for g in done if name in g.seats]
        for prev, nxt in zip(mine, mine[1:], strict=False):
            assert _t(nxt.created) >= _t(prev.finished), (name, prev, nxt)
    summary: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    assert summary["games"] == 16 and {s["bot"] for s in summary["standings"]} == {"alice", "bob", "carol"}
    assert "Bot bob left" in err and "Bot carol connected" in err
    assert "<table>" in html.read_text()
    # The standings can be printed again from the database alone.
    r = subprocess.run([sys.executable, "-m", "maag.server", "ladder", "--standings", "--db", db, "--json"],
                       capture_output=True, text=True, check=True)
    assert json.loads(r.stdout.strip().splitlines()[-1])["standings"] == summary["standings"]


def _t(stamp: str | None) -> dt.datetime:
    assert stamp is not None
    return dt.datetime.fromisoformat(stamp)
