"""`maag tournament` end to end: real referee, real bot processes, real databases.

- the same tournament on SQLite and on PostgreSQL gives identical standings and results;
- kill -9 of the runner mid-tournament, then the same command again: nothing lost, nothing
  counted twice (every scheduled game has exactly one stored, finished game);
- Swiss and gauntlet formats, the SPRT stop rule, exports;
- games spread over a Dask LocalCluster with two workers.

Bots: `first` (always the first legal action) and seeded random bots given as external
commands, so every game is a function of its seed; the tiny map keeps games short.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from maag.server.compete import formats as T
from maag.server.compete.runner import TournamentRunner, recover
from maag.server.storage.base import open_storage
from maag.server.storage.tournaments import open_tournament_store

RANDOM_BOT = ("{python} -m maag.server.net.minibot --connect {{connect}} --token {{token}} --agent random "
              "--seed {seed} --concurrency {{concurrency}}")


def random_bot(name: str, seed: int) -> str:
    return f"{name}=" + RANDOM_BOT.format(python=sys.executable, seed=seed)


BOTS = ["--bot", "first", "--bot", random_bot("rnd7", 7), "--bot", random_bot("rnd8", 8)]


def maag(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "maag.server", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


def summary(r: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert r.returncode == 0, r.stderr[-3000:]
    return dict(json.loads(r.stdout.strip().splitlines()[-1]))


def stored_games(db: str, tid: str) -> dict[str, list[Any]]:
    """Stored games of tournament `tid` by schedule key."""
    st = open_storage(db)
    try:
        out: dict[str, list[Any]] = {}
        for g in st.list_games(limit=10**6):
            if g.match_id and g.match_id.startswith(f"tournament:{tid}:"):
                out.setdefault(g.match_id.rsplit(":", 1)[1], []).append(g)
        return out
    finally:
        st.close()


def check_exactly_once(db: str, tid: str, n: int) -> None:
    """Every scheduled game done once, and backed by exactly one finished stored game."""
    with _Store(db) as store:
        rows = store.rows(tid)
    assert len(rows) == n
    assert all(r.status == "done" for r in rows), [(r.game.key, r.status) for r in rows]
    ids = [r.game_id for r in rows]
    assert len(set(ids)) == n
    games = stored_games(db, tid)
    for r in rows:
        finished = [g for g in games[r.game.key] if g.status == "finished"]
        assert [g.id for g in finished] == [r.game_id], (r.game.key, finished)
        assert finished[0].winner == r.winner and finished[0].seats == (r.game.seat0, r.game.seat1)


class _Store:
    def __init__(self, db: str) -> None:
        self.db = db

    def __enter__(self) -> Any:
        self.store = open_tournament_store(self.db)
        return self.store

    def __exit__(self, *exc: object) -> None:
        self.store.close()


def test_sqlite_and_postgres_give_identical_standings(tmp_path: Path, postgres_db: str) -> None:
    args = [*BOTS, "--games-per-pair", "2", "--map", "a-tiny", "--tc", "10s", "--seed", "5", "--json"]
    sqlite = f"sqlite:///{tmp_path / 'cup.sqlite3'}"
    a = summary(maag("tournament", *args, "--db", sqlite, cwd=tmp_path))
    b = summary(maag("tournament", *args, "--db", postgres_db, cwd=tmp_path))
    assert a["games"] == b["games"] == 6
    assert a["standings"] == b["standings"]
    assert a["crosstable"] == b["crosstable"]
    assert sum(s["games"] for s in a["standings"]) == 12
    assert any(s["wins"] for s in a["standings"])  # not all draws: the comparison means something
    for s in a["standings"]:
        assert set(s) >= {"bot", "games", "score", "elo", "elo_ci95"}
    for db in (sqlite, postgres_db):
        check_exactly_once(db, a["tournament"], 6)
    # The same command again: nothing left to play, the same standings.
    again = summary(maag("tournament", *args, "--db", postgres_db, cwd=tmp_path))
    assert again["standings"] == b["standings"] and again["games"] == 6


def wait_for_done(db: str, tid: str, n: int, proc: subprocess.Popen[str]) -> None:
    """Poll the schedule until `n` games are done (or the runner exited)."""
    while proc.poll() is None:
        try:
            with _Store(db) as store:
                if sum(r.status == "done" for r in store.rows(tid)) >= n:
                    return
        except Exception:  # the runner has not created the tables yet
            pass
        time.sleep(0.05)
    raise AssertionError(f"the runner exited ({proc.returncode}) before {n} games were done: "
                         f"{proc.stderr.read() if proc.stderr else ''}")


def wait_for_logged_start(db: str, tid: str, proc: subprocess.Popen[str]) -> None:
    """Poll until a game in flight has its start and actions in the fleet's action log: a
    referee of the database could take it over and finish it (on PostgreSQL at once, the
    killed referee's session gone), which the resumed runner must not let happen once it
    plays the game again. Killed sooner, such a game is merely aborted (start not logged)."""
    st = open_storage(db)
    try:
        while proc.poll() is None:
            rows = st.db.query("SELECT 1 FROM games g WHERE g.status = 'running' AND g.match_id LIKE ? AND "
                               "EXISTS (SELECT 1 FROM game_actions a WHERE a.game_id = g.id)",
                               (f"tournament:{tid}:%",))
            if rows:
                return
            time.sleep(0.02)
    finally:
        st.close()
    raise AssertionError(f"the runner exited ({proc.returncode}) with no game in flight")


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_kill_9_and_resume_lose_and_duplicate_nothing(tmp_path: Path, backend: str,
                                                      request: pytest.FixtureRequest) -> None:
    db = (f"sqlite:///{tmp_path / 'cup.sqlite3'}" if backend == "sqlite"
          else request.getfixturevalue("postgres_db"))
    # The full-size map: games long enough (hundreds of actions) to be killed in flight.
    args = ["tournament", "--bot", "random", "--bot", random_bot("rnd7", 7), "--bot", random_bot("rnd8", 8),
            "--games-per-pair", "4", "--tc", "10s", "--concurrency", "2", "--db", db, "--json"]
    kills = 0
    tid = None
    for target in (2, 6):
        proc = subprocess.Popen([sys.executable, "-m", "maag.server", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=tmp_path)
        if tid is None:
            tid = _tournament_id(db, proc)
        wait_for_done(db, tid, target, proc)
        wait_for_logged_start(db, tid, proc)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        kills += 1
    assert tid is not None
    with _Store(db) as store:
        rows = store.rows(tid)
    interrupted = [r for r in rows if r.status == "claimed"]
    assert len([r for r in rows if r.status == "done"]) >= 6 and len(rows) == 12
    final = summary(maag(*args, cwd=tmp_path))
    assert final["games"] == 12 and sum(s["games"] for s in final["standings"]) == 24
    check_exactly_once(db, tid, 12)
    # The games that were in flight at the last kill were either adopted or replayed.
    games = stored_games(db, tid)
    for r in interrupted:
        assert len([g for g in games[r.game.key] if g.status == "finished"]) == 1
    assert kills == 2


def _tournament_id(db: str, proc: subprocess.Popen[str]) -> str:
    """The id of the (only) tournament in `db`, once the runner has created it."""
    while proc.poll() is None:
        try:
            with _Store(db) as store:
                ts = store.tournaments()
            if ts:
                return str(ts[0][0])
        except Exception:
            pass
        time.sleep(0.05)
    raise AssertionError(f"the runner exited early: {proc.stderr.read() if proc.stderr else ''}")


def test_recover_adopts_a_stored_result_and_replays_the_rest(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.sqlite3'}"
    spec = T.TournamentSpec(format="round-robin", bots=(T.BotSpec("a"), T.BotSpec("b")), games_per_pair=4,
                            seed=1)
    store = open_tournament_store(db)
    storage = open_storage(db)
    try:
        store.open_tournament(spec.id, spec.to_dict())
        games = T.schedule_round(spec, 0, [])
        store.add_games(spec.id, games)
        g0, g1, g2 = store.claim(spec.id, 3)
        # g0: the referee stored its result, then the runner died before recording it.
        gid = storage.create_game("heroes", {}, (g0.seat0, g0.seat1), "1s", T.match_id(spec.id, g0.key))
        storage.finish_game(gid, {"seed": g0.seed, "result": {"winner": 1, "reason": "rules", "plies": 9}})
        # g1: died mid-game (left running, then aborted by the next server).
        storage.create_game("heroes", {}, (g1.seat0, g1.seat1), "1s", T.match_id(spec.id, g1.key))
        assert store.finish(spec.id, g2.key, 77, -1, "turn_limit")
        assert recover(store, storage, spec.id) == (1, 1)
        rows = {r.game.key: r for r in store.rows(spec.id)}
        assert (rows[g0.key].status, rows[g0.key].game_id, rows[g0.key].winner) == ("done", gid, 1)
        assert rows[g1.key].status == "pending" and rows[g2.key].game_id == 77
        assert recover(store, storage, spec.id) == (0, 0)
    finally:
        store.close()
        storage.close()


def test_recover_leaves_no_game_of_a_dead_run_to_finish_after_its_replay(tmp_path: Path) -> None:
    """A game of a dead run still running (its referee's lease not lapsed yet) is aborted
    before its row is released: no referee can take it over and store its result beside the
    replay's. In a cluster run, a game a live worker plays is waited for and adopted."""
    import threading

    from maag.server.storage.base import LeaseLost

    db = f"sqlite:///{tmp_path / 'r.sqlite3'}"
    spec = T.TournamentSpec(format="round-robin", bots=(T.BotSpec("a"), T.BotSpec("b")), games_per_pair=2,
                            seed=1)
    store = open_tournament_store(db)
    storage = open_storage(db)
    try:
        store.open_tournament(spec.id, spec.to_dict())
        store.add_games(spec.id, T.schedule_round(spec, 0, []))
        g0, g1 = store.claim(spec.id, 2)
        storage.register_server("dead", "the killed runner's arena", 60.0)
        gid = storage.create_game("heroes", {}, (g0.seat0, g0.seat1), "1s", T.match_id(spec.id, g0.key),
                                  server="dead")
        assert recover(store, storage, spec.id) == (0, 2)
        stored = storage.get_game(gid)
        assert stored is not None and stored.status == "aborted"
        with pytest.raises(LeaseLost):  # its referee (or one that took it over) cannot store it
            storage.finish_game(gid, {"seed": 1, "result": {"winner": 0, "reason": "rules", "plies": 3}},
                                server="dead")
        # A cluster run: the worker is alive and stores its game's result a little later.
        g0, g1 = store.claim(spec.id, 2)
        gid = storage.create_game("heroes", {}, (g1.seat0, g1.seat1), "1s", T.match_id(spec.id, g1.key),
                                  server="dead")
        worker = open_storage(db)
        late = threading.Timer(0.5, lambda: worker.finish_game(
            gid, {"seed": 1, "result": {"winner": 1, "reason": "rules", "plies": 5}}, server="dead"))
        late.start()
        try:
            assert recover(store, storage, spec.id, cluster=True, poll_s=0.05) == (1, 1)
        finally:
            late.join()
            worker.close()
        rows = {r.game.key: r for r in store.rows(spec.id)}
        assert (rows[g1.key].status, rows[g1.key].game_id, rows[g1.key].winner) == ("done", gid, 1)
        assert rows[g0.key].status == "pending"
    finally:
        store.close()
        storage.close()


def bots(*names: str) -> tuple[T.BotSpec, ...]:
    """`first`, or seeded random bots under the other names."""
    return tuple(T.parse_bot(n if n == "first" else random_bot(n, i)) for i, n in enumerate(names))


def test_swiss_through_the_referee(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's.sqlite3'}"
    spec = T.TournamentSpec(format="swiss", bots=bots("first", "r1", "r2", "r3", "r4"), games_per_pair=2,
                            rounds=3, tc="10s", config=(("map", "a-tiny"),))
    runner = TournamentRunner(spec, db, concurrency=2)
    st = runner.run()
    with _Store(db) as store:
        rows = store.rows(spec.id)
    assert st.games == len(rows) == 3 * 2 * 2  # 3 rounds, 2 pairings (one bye), 2 games each
    met = [frozenset((r.game.seat0, r.game.seat1)) for r in rows if r.game.key.endswith("g0")]
    assert len(set(met)) == len(met) == 6  # no pairing repeated
    byes = [set(spec.names) - {x for r in rows if r.game.round == k for x in (r.game.seat0, r.game.seat1)}
            for k in range(3)]
    assert all(len(b) == 1 for b in byes) and len(set.union(*byes)) == 3
    check_exactly_once(db, spec.id, 12)


def test_gauntlet_sprt_and_exports(tmp_path: Path) -> None:
    db = str(tmp_path / "g.sqlite3")
    out = tmp_path / "out"
    out.mkdir()
    r = maag("tournament", "--format", "gauntlet", "--bot", "first", "--bot", random_bot("rnd", 3),
             "--bot", random_bot("rnd2", 4), "--games-per-pair", "2", "--map", "a-tiny", "--tc", "10s",
             "--db", db, "--out-csv", str(out / "s.csv"), "--out-json", str(out / "s.json"),
             "--out-html", str(out / "s.html"), "--json", cwd=tmp_path)
    s = summary(r)
    assert s["format"] == "gauntlet" and s["games"] == 4
    assert "rnd2" not in s["crosstable"]["rnd"]  # the field does not play itself
    assert (out / "s.csv").read_text().splitlines()[0].startswith("rank,bot,elo")
    assert json.loads((out / "s.json").read_text())["games"] == 4
    assert "<table>" in (out / "s.html").read_text()
    # SPRT: `first` against a random bot on the tiny map, stopping as soon as it decides.
    r = maag("tournament", "--bot", "first", "--bot", random_bot("rnd", 3), "--games-per-pair", "60",
             "--map", "a-tiny", "--tc", "10s", "--db", db, "--concurrency", "2",
             "--sprt", "elo0=-200,elo1=0", "--json", cwd=tmp_path)
    s = summary(r)
    assert s["sprt"]["decision"] in ("H0", "H1")
    assert s["games"] < s["scheduled"] == 60
    assert "SPRT: llr" in r.stderr


def test_tournament_on_a_dask_cluster_with_two_workers(tmp_path: Path) -> None:
    """Games go to a Dask LocalCluster's two workers (processes), each running the referee
    and the bots of its games; the results come back to the one database."""
    from distributed import LocalCluster

    db = f"sqlite:///{tmp_path / 'd.sqlite3'}"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        s = summary(maag("tournament", "--bot", "first", "--bot", random_bot("rnd", 3),
                         "--games-per-pair", "4", "--map", "a-tiny", "--tc", "10s", "--db", db,
                         "--cluster", cluster.scheduler_address, "--concurrency", "2", "--json",
                         cwd=tmp_path))
        workers = set(cluster.scheduler_info["workers"])
    assert s["games"] == 4
    assert set(s["workers"]) == workers and len(workers) == 2 and sum(s["workers"].values()) == 4
    check_exactly_once(db, s["tournament"], 4)


def test_a_bot_that_keeps_crashing_stops_the_tournament_resumably(tmp_path: Path) -> None:
    db = str(tmp_path / "c.sqlite3")
    r = maag("tournament", "--bot", "first", "--bot", "bad=exit 3", "--map", "a-tiny", "--db", db,
             cwd=tmp_path)
    assert r.returncode == 1
    assert "'bad' exited 4 times" in r.stderr and "run the same command again to resume" in r.stderr
    with _Store(f"sqlite:///{db}") as store:
        rows = store.rows(store.tournaments()[0][0])
    assert not any(row.status == "done" for row in rows)


def test_a_local_cluster_serves_every_round_of_a_swiss_tournament(tmp_path: Path) -> None:
    """`--cluster local` starts one LocalCluster for the whole run: a three-round Swiss
    tournament is played by the same two worker processes throughout (a cluster per round
    would show six worker addresses)."""
    db = f"sqlite:///{tmp_path / 'w.sqlite3'}"
    bots = [random_bot(f"r{i}", i) for i in range(4)]
    bot_args = [a for b in bots for a in ("--bot", b)]
    s = summary(maag("tournament", "--format", "swiss", "--rounds", "3", *bot_args, "--games-per-pair", "2",
                     "--map", "a-tiny", "--tc", "10s", "--db", db, "--cluster", "local", "--concurrency", "2",
                     "--json", cwd=tmp_path))
    assert s["games"] == 12
    assert len(s["workers"]) <= 2 and sum(s["workers"].values()) == 12, s["workers"]
    check_exactly_once(db, s["tournament"], 12)


def test_a_refused_package_says_what_to_fix(tmp_path: Path) -> None:
    """A package the host refuses as it is (here: more threads than --max-threads grants) stops
    the tournament with the reason and what to do; running the same command alone would only
    refuse it again, so that is not all the message says."""
    pkg = tmp_path / "greedy"
    pkg.mkdir()
    (pkg / "maag-bot.toml").write_text('name = "greedy"\nrun = "python3 bot.py"\nthreads = 256\n')
    (pkg / "bot.py").write_text("raise SystemExit(0)\n")
    r = maag("tournament", "--bot", str(pkg), "--bot", "first", "--map", "a-tiny", "--max-threads", "2",
             "--db", str(tmp_path / "r.sqlite3"), cwd=tmp_path)
    assert r.returncode == 2, r.stderr[-2000:]
    assert "threads = 256, but this host grants at most 2 (--max-threads); fix the package" in r.stderr
    assert "Traceback" not in r.stderr
