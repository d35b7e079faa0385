"""The host governs its competition, and stopping is prompt (docs/competitions.md, "Governing a
competition"), with real `maag ladder` processes, real bot processes over TCP, and the real
command line on SQLite and PostgreSQL:

- strikes, a pardon and a void: bob answers too late every time (`--late forfeit`, a strike
  rule `time:2/10`) and is struck out; `maag bot pardon bob` lets him play again in the
  running ladder; struck out again, `maag game void` of his last loss takes it out of his
  strike history (he plays again) and out of the standings (games, forfeits), and `maag game
  show` and `maag game rulings` print who voided or pardoned what, when and why;
- SIGTERM with no game running (one request held by the games-per-minute limit) ends the
  ladder within 5 s, saying it waits for no game (it waited about a minute before);
- SIGTERM with a game running names the game and waits for its end, which is stored;
- `maag bot add bob --replace` while bob plays: the game in progress is finished on the board,
  not lost by bob (before, the old connection was closed and bob lost it);
- a tournament's voided game leaves its table (3 of 4 games rated) and is not played again.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from maag.server.storage.base import GameRecord, open_storage

MAAG = [sys.executable, "-m", "maag.server"]
STUCK = 150.0  # seconds: a safety net against a hung test, not a timing requirement


def maag(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MAAG, *args], capture_output=True, text=True, timeout=60)


class LadderProc:
    """A `maag ladder` process, its output lines read as they come (through a file)."""

    def __init__(self, tmp: Path, db: str, *args: str) -> None:
        self.out_path, self.err_path = tmp / "ladder.out", tmp / "ladder.err"
        port_file = tmp / "port"
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.proc = subprocess.Popen([*MAAG, "ladder", "--db", db, "--port", "0", "--port-file",
                                          str(port_file), "--game", "nim", "--rating-interval", "0", *args],
                                         stdout=out, stderr=err, text=True)
        self.until("the port file", lambda: port_file.exists() and port_file.read_text().strip() != "")
        self.port = int(port_file.read_text())

    def out(self) -> str:
        return self.out_path.read_text()

    def err(self) -> str:
        return self.err_path.read_text()

    def until(self, what: str, cond: Callable[[], bool], limit: float = STUCK) -> None:
        t0 = time.monotonic()
        while not cond():
            if self.proc.poll() is not None:
                raise AssertionError(f"the ladder exited ({self.proc.returncode}) while waiting for {what}:\n"
                                     f"{self.out()[-3000:]}\n{self.err()[-3000:]}")
            if time.monotonic() - t0 > limit:
                raise AssertionError(f"stuck waiting for {what}:\n{self.out()[-3000:]}\n{self.err()[-3000:]}")
            time.sleep(0.05)

    def stop(self) -> float:
        """SIGTERM; the seconds until the process exited."""
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(STUCK)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        return time.monotonic() - t0


@pytest.fixture
def cleanup() -> object:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()


def add_bots(db: str, *names: str) -> dict[str, str]:
    tokens = {}
    for name in names:
        r = maag("bot", "add", name, "--db", db)
        assert r.returncode == 0, r.stderr
        tokens[name] = r.stdout.strip().splitlines()[-1]
    return tokens


def start_bot(procs: list[subprocess.Popen[str]], port: int, token: str, name: str,
              delay_ms: float = 0.0) -> subprocess.Popen[str]:
    p = subprocess.Popen([sys.executable, "-m", "maag.server.net.minibot", "--connect", f"127.0.0.1:{port}",
                          "--token", token, "--agent", "random", "--name", name, "--delay", str(delay_ms)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    procs.append(p)
    return p


def games(db: str) -> list[GameRecord]:
    st = open_storage(db)
    try:
        return sorted(st.list_games(match_id="ladder:main", limit=10**6), key=lambda g: g.id)
    finally:
        st.close()


def test_strikes_pardon_and_void(db_url: str, tmp_path: Path, cleanup: list[subprocess.Popen[str]]) -> None:
    db = db_url
    tokens = add_bots(db, "alice", "bob", "carol")
    # No games-per-minute limit: alice and carol, quick random bots, would use up theirs within
    # seconds of each minute, and bob would wait for the next minute to meet either.
    lad = LadderProc(tmp_path, db, "--tc", "300ms", "--late", "forfeit", "--strikes", "time:2/10",
                     "--max-games-per-minute", "0")
    cleanup.append(lad.proc)
    start_bot(cleanup, lad.port, tokens["alice"], "alice")
    start_bot(cleanup, lad.port, tokens["carol"], "carol")
    start_bot(cleanup, lad.port, tokens["bob"], "bob", delay_ms=600)  # late on every turn: loses on time

    lad.until("bob struck out", lambda: "Bot bob struck out (time:2/10)" in lad.out())
    r = maag("bot", "pardon", "bob", "--why", "the host's network lagged", "--by", "tester", "--db", db)
    assert r.returncode == 0, r.stdout + r.stderr
    upto = json.loads(maag("game", "rulings", "--json", "--db", db).stdout)[0]["upto"]
    assert "bob pardoned" in r.stdout and "by tester" in r.stdout and "the host's network lagged" in r.stdout
    lad.until("the pardon", lambda: "Bot bob pardoned by the host (the host's network lagged)" in lad.out())
    # A struck bot plays again after its pardon (a game it starts later than the pardon).
    lad.until("a game of bob after the pardon",
              lambda: any("bob" in g.seats and g.id > upto and g.status == "finished" for g in games(db)))
    lad.until("bob struck out again", lambda: lad.out().count("Bot bob struck out") == 2)

    last_loss = max(g.id for g in games(db) if "bob" in g.seats and g.verdict and g.verdict["kind"] == "time")
    r = maag("game", "void", str(last_loss), "--why", "bob's machine was swapping", "--by", "tester",
             "--db", db)
    assert r.returncode == 0, r.stdout + r.stderr
    lad.until("the void", lambda: f"Game {last_loss} voided by the host" in lad.out())
    # Without that loss bob breaks no rule: he plays again.
    lad.until("a game of bob after the void",
              lambda: any("bob" in g.seats and g.id > last_loss and g.status == "finished"
                          for g in games(db)))
    stop_s = lad.stop()
    assert lad.proc.returncode == 0, lad.err()
    assert stop_s < 10, (stop_s, lad.err())

    # The voided game keeps its result for the record, and is rated nowhere.
    rec = next(g for g in games(db) if g.id == last_loss)
    assert rec.status == "voided" and rec.verdict is not None
    done = [g for g in games(db) if g.status == "finished"]
    r = maag("ladder", "--standings", "--json", "--db", db)
    assert r.returncode == 0, r.stderr
    st = json.loads(r.stdout.strip().splitlines()[-1])
    assert st["games"] == sum(1 for g in done if g.winner is not None)
    row = next(x for x in st["standings"] if x["bot"] == "bob")
    assert row["games"] == sum(1 for g in done if "bob" in g.seats)
    assert row["verdicts"].get("time", 0) == sum(1 for g in done if "bob" in g.seats and g.verdict
                                                 and g.verdict["kind"] == "time")
    # Who, when and why.
    r = maag("game", "show", str(last_loss), "--db", db)
    assert r.returncode == 0 and "voided" in r.stdout and "by tester" in r.stdout, r.stdout
    assert "bob's machine was swapping" in r.stdout
    r = maag("game", "rulings", "--json", "--db", db)
    rulings = json.loads(r.stdout)
    assert [(x["kind"], x["who"]) for x in rulings] == [("pardon", "tester"), ("void", "tester")]
    assert rulings[0]["bot"] == "bob" and rulings[0]["upto"] == upto
    assert rulings[1]["game_id"] == last_loss
    # A game is voided once; a running or unknown one not at all.
    r = maag("game", "void", str(last_loss), "--why", "again", "--db", db)
    assert r.returncode == 1 and "only a finished game is voided" in r.stdout


def test_sigterm_with_no_game_running_is_prompt(tmp_path: Path, cleanup: list[subprocess.Popen[str]]) -> None:
    db = str(tmp_path / "ladder.sqlite3")
    tokens = add_bots(db, "alice", "bob")
    lad = LadderProc(tmp_path, db, "--tc", "1s", "--max-games-per-minute", "2")
    cleanup.append(lad.proc)
    start_bot(cleanup, lad.port, tokens["alice"], "alice")
    start_bot(cleanup, lad.port, tokens["bob"], "bob")
    lad.until("two games", lambda: sum(g.status == "finished" for g in games(db)) >= 2)
    time.sleep(1.0)  # the games-per-minute limit holds any third game: none is running
    assert not [g for g in games(db) if g.status == "running"]
    stop_s = lad.stop()
    assert stop_s < 5, (stop_s, lad.err())
    assert lad.proc.returncode == 0, lad.err()
    assert "maag ladder: stopping; no game in progress" in lad.err()
    assert all(g.status == "finished" for g in games(db))


def test_sigterm_waits_for_the_game_in_progress_and_names_it(
        tmp_path: Path, cleanup: list[subprocess.Popen[str]]) -> None:
    db = str(tmp_path / "ladder.sqlite3")
    tokens = add_bots(db, "alice", "bob")
    lad = LadderProc(tmp_path, db, "--tc", "10s")
    cleanup.append(lad.proc)
    start_bot(cleanup, lad.port, tokens["alice"], "alice", delay_ms=300)
    start_bot(cleanup, lad.port, tokens["bob"], "bob", delay_ms=300)
    lad.until("a game under way", lambda: any(g.status == "running" for g in games(db)))
    gid = next(g.id for g in games(db) if g.status == "running")
    stop_s = lad.stop()
    assert lad.proc.returncode == 0, lad.err()
    assert f"maag ladder: stopping; waiting for game {gid} in progress to end" in lad.err(), lad.err()
    rec = next(g for g in games(db) if g.id == gid)
    assert rec.status == "finished" and rec.reason in ("rules", "turn_limit"), rec
    assert stop_s < 60, stop_s  # (the game's own length: a few seconds of 300 ms answers)


def test_replaced_token_does_not_lose_the_game_in_progress(
        tmp_path: Path, cleanup: list[subprocess.Popen[str]]) -> None:
    db = str(tmp_path / "ladder.sqlite3")
    tokens = add_bots(db, "alice", "bob")
    lad = LadderProc(tmp_path, db, "--tc", "10s", "--max-games", "1")
    cleanup.append(lad.proc)
    start_bot(cleanup, lad.port, tokens["alice"], "alice", delay_ms=300)
    start_bot(cleanup, lad.port, tokens["bob"], "bob", delay_ms=300)
    lad.until("a game under way", lambda: any(g.status == "running" and g.plies is None for g in games(db)))
    gid = next(g.id for g in games(db) if g.status == "running")
    r = maag("bot", "add", "bob", "--replace", "--db", db)
    assert r.returncode == 0, r.stdout
    lad.proc.wait(STUCK)
    assert lad.proc.returncode == 0, lad.err()
    rec = next(g for g in games(db) if g.id == gid)
    assert rec.status == "finished" and rec.verdict is None and rec.reason in ("rules", "turn_limit"), rec


def test_a_voided_game_leaves_the_tournament_table(tmp_path: Path) -> None:
    db = str(tmp_path / "t.sqlite3")
    args = ["tournament", "--db", db, "--name", "cup", "--game", "nim", "--bot", "random", "--bot", "first",
            "--games-per-pair", "4", "--tc", "1s", "--seed", "5", "--json"]
    r = maag(*args)
    assert r.returncode == 0, r.stderr
    before = json.loads(r.stdout.strip().splitlines()[-1])
    assert before["games"] == 4
    st = open_storage(db)
    try:
        first = min(g.id for g in st.list_games(status="finished"))
    finally:
        st.close()
    r = maag("game", "void", str(first), "--why", "a test", "--by", "tester", "--db", db)
    assert r.returncode == 0, r.stdout
    r = maag(*args)  # a finished tournament: its standings again, from its schedule; nothing replayed
    assert r.returncode == 0, r.stderr
    after = json.loads(r.stdout.strip().splitlines()[-1])
    assert after["games"] == 3 and after["scheduled"] == 4
    assert sum(row["games"] for row in after["standings"]) == 2 * 3
    st = open_storage(db)
    try:
        assert len(st.list_games(limit=100)) == 4  # the voided game was not played again
    finally:
        st.close()
