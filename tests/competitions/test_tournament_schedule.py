"""Tournament schedules (formats, mirrored seeds, Swiss pairings), the schedule store on both
backends (claims, exactly-once results, the runner lock), standings and exports."""

from __future__ import annotations

import csv
import io
import itertools
import json
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator

import pytest
from maag.server.compete import formats as T
from maag.server.storage.tournaments import (
    GameRow,
    ScheduledGame,
    SpecMismatch,
    TournamentBusy,
    TournamentStore,
    open_tournament_store,
)


def spec(fmt: str = "round-robin", n: int = 4, gpp: int = 4, **kw: object) -> T.TournamentSpec:
    bots = tuple(T.BotSpec(f"b{i}") for i in range(n))
    kw.setdefault("seed", 1)
    return T.TournamentSpec(format=fmt, bots=bots, games_per_pair=gpp, **kw)  # type: ignore[arg-type]


def test_parse_bot() -> None:
    assert T.parse_bot("greedy") == T.BotSpec("greedy", None)
    assert T.parse_bot("mine=python3 bot.py --x=1") == T.BotSpec("mine", "python3 bot.py --x=1")
    for bad in ("", "=cmd", "x="):
        with pytest.raises(ValueError):
            T.parse_bot(bad)


def test_spec_checks_and_id() -> None:
    with pytest.raises(ValueError):
        spec(gpp=3)
    with pytest.raises(ValueError):
        spec(n=1)
    with pytest.raises(ValueError):
        T.TournamentSpec(format="knockout", bots=(T.BotSpec("a"), T.BotSpec("b")))
    with pytest.raises(ValueError):
        T.TournamentSpec(format="round-robin", bots=(T.BotSpec("a"), T.BotSpec("a")))
    s = spec()
    assert s.id == spec().id and s.id != spec(seed=2).id and s.id != spec(tc="2s").id
    assert T.TournamentSpec.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    assert spec(name="cup").id == "cup"


def test_round_robin_schedule_is_mirrored_and_complete() -> None:
    s = spec(n=5, gpp=4)
    games = T.schedule_round(s, 0, [])
    assert len(games) == 10 * 4
    assert len({g.key for g in games}) == len(games)
    assert [g.seq for g in games] == list(range(len(games)))
    assert games == T.schedule_round(s, 0, [])  # deterministic
    # Which two games share a deal is a shuffle, not always the next game.
    assert any(games[n].seed != games[n + 1].seed for n in range(0, len(games), 2))
    # Another base: other seeds, the same slots.
    other = T.schedule_round(s, 0, [], base=2)
    assert [(g.key, g.seat0, g.seat1) for g in other] == [(g.key, g.seat0, g.seat1) for g in games]
    assert not {g.seed for g in other} & {g.seed for g in games}
    by_seed: dict[int, list[ScheduledGame]] = {}
    for g in games:
        by_seed.setdefault(g.seed, []).append(g)
    assert len(by_seed) == 20
    for pair in by_seed.values():
        a, b = pair
        assert (a.seat0, a.seat1) == (b.seat1, b.seat0)
    seats = Counter(g.seat0 for g in games)
    assert set(seats.values()) == {8}
    # The first round of the circle method keeps the bots apart.
    first = games[:4]
    assert len({x for g in first[::2] for x in (g.seat0, g.seat1)}) == 4


def test_gauntlet() -> None:
    s = spec("gauntlet", n=4, gpp=2, gauntlet="b2")
    games = T.schedule_round(s, 0, [])
    assert len(games) == 6 and all("b2" in (g.seat0, g.seat1) for g in games)


def done_row(g: ScheduledGame, winner: int) -> GameRow:
    return GameRow(g, "done", 1, None, winner, "rules")


def test_swiss_pairs_by_score_without_rematches() -> None:
    s = spec("swiss", n=6, gpp=2, rounds=3)
    assert T.rounds_total(s) == 3 and T.rounds_total(spec("swiss", n=6)) == 4
    rows: list[GameRow] = []
    met: set[frozenset[str]] = set()
    strength = {f"b{i}": i for i in range(6)}
    for rnd in range(3):
        games = T.schedule_round(s, rnd, rows)
        assert games == T.schedule_round(s, rnd, rows)
        pairs = {frozenset((g.seat0, g.seat1)) for g in games}
        assert len(pairs) == 3 and not (pairs & met)
        met |= pairs
        for g in games:  # the stronger (higher index) always wins
            rows.append(done_row(g, 0 if strength[g.seat0] > strength[g.seat1] else 1))
        if rnd == 0:
            winners = {g.seat0 if strength[g.seat0] > strength[g.seat1] else g.seat1 for g in games}
        if rnd == 1:  # score groups: two of round 0's winners meet
            assert any(p <= winners for p in pairs)
    st = T.standings("sw", s, rows)
    assert st.table[0]["bot"] in ("b5", "b4")


def test_swiss_odd_gives_byes_to_different_bots() -> None:
    s = spec("swiss", n=5, gpp=2, rounds=3)
    rows: list[GameRow] = []
    sat_out = []
    for rnd in range(3):
        games = T.schedule_round(s, rnd, rows)
        playing = {x for g in games for x in (g.seat0, g.seat1)}
        assert len(playing) == 4
        sat_out.append(next(iter(set(s.names) - playing)))
        rows += [done_row(g, -1) for g in games]
    assert len(set(sat_out)) == 3


# -- the store, on both backends (db_url: tests/conftest.py) --------------------------------


@pytest.fixture
def store(db_url: str) -> Iterator[TournamentStore]:
    st = open_tournament_store(db_url)
    yield st
    st.close()


def test_store_claims_and_counts_each_result_once(store: TournamentStore) -> None:
    s = spec(n=3, gpp=2)
    tid = s.id
    assert store.open_tournament(tid, s.to_dict()) is True
    assert store.open_tournament(tid, s.to_dict()) is False
    with pytest.raises(SpecMismatch):
        store.open_tournament(tid, spec(n=3, gpp=4).to_dict())
    games = T.schedule_round(s, 0, [])
    assert store.add_games(tid, games) == 6
    assert store.add_games(tid, games) == 0
    first = store.claim(tid, 2)
    assert first == games[:2]
    nxt = store.claim(tid, 10)
    assert nxt == games[2:]
    assert store.claim(tid, 1) == []
    assert store.finish(tid, games[0].key, 17, 0, "rules") is True
    assert store.finish(tid, games[0].key, 18, 1, "rules") is False  # counted once
    assert store.release(tid, games[1].key) is True
    assert store.release(tid, games[0].key) is False  # done stays done
    assert store.claim(tid, 5) == [games[1]]
    rows = store.rows(tid)
    assert [r.status for r in rows] == ["done"] + ["claimed"] * 5
    assert rows[0].game_id == 17 and rows[0].score0 == 1.0 and rows[1].attempts == 2
    assert store.spec(tid) == s.to_dict()
    assert [t[0] for t in store.tournaments()] == [tid]


LOCKER = """
import sys
from maag.server.storage.tournaments import open_tournament_store
st = open_tournament_store(sys.argv[1])
st.lock_runner("cup")
print("locked", flush=True)
sys.stdin.readline()
"""


def test_runner_lock_is_exclusive_and_dies_with_its_process(db_url: str) -> None:
    st = open_tournament_store(db_url)
    p = subprocess.Popen([sys.executable, "-c", LOCKER, db_url], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "locked"
    with pytest.raises(TournamentBusy):
        st.lock_runner("cup")
    st.lock_runner("other-cup")
    p.kill()
    p.wait()
    # Released by the kill: PostgreSQL's backend lets go of its session's lock once it sees
    # the dead client's socket closed, a moment after the process is reaped (it failed
    # once at once on a loaded machine); the lock must come free within seconds.
    deadline = time.monotonic() + 10.0
    while True:
        try:
            st.lock_runner("cup")
            break
        except TournamentBusy:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    st.close()


def test_standings_crosstable_and_exports() -> None:
    s = spec(n=3, gpp=2)
    games = T.schedule_round(s, 0, [])
    winners = itertools.cycle([0, -1, 1])
    rows = [done_row(g, next(winners)) for g in games]
    st = T.standings(s.id, s, rows)
    assert st.games == 6 and sum(r["score"] for r in st.table) == 6
    assert sum(r["games"] for r in st.table) == 12
    for r in st.table:
        assert r["wins"] + r["draws"] + r["losses"] == r["games"] == 4
        lo, hi = r["elo_ci95"]
        assert lo <= r["elo"] <= hi
    for a in s.names:
        for b, c in st.crosstable[a].items():
            back = st.crosstable[b][a]
            assert c["points"] + back["points"] == c["games"] == back["games"] == 2
    parsed = list(csv.DictReader(io.StringIO(T.to_csv(st))))
    assert [p["bot"] for p in parsed] == [r["bot"] for r in st.table]
    doc = json.loads(T.to_json(st, rows))
    assert doc["games"] == 6 and len(doc["game_list"]) == 6 and doc["standings"] == st.table
    for g, r in zip(doc["game_list"], rows, strict=True):  # seats and winners 1 and 2, as on the wire
        assert (g["seat1"], g["seat2"]) == (r.game.seat0, r.game.seat1)
        assert g["winner"] == {0: 1, 1: 2}.get(r.winner)  # type: ignore[arg-type]
    page = T.to_html(st)
    assert page.startswith("<!doctype html>") and all(b in page for b in s.names)
    # Nothing played yet: a table of zeros, no ratings.
    empty = T.standings(s.id, s, [GameRow(g, "pending", 0, None, None, None) for g in games])
    assert empty.games == 0 and all(r["games"] == 0 for r in empty.table)
