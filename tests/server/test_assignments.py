"""A fleet ladder's storage on each backend (fleet/assignments.py), without sockets: the
presence of live referees only; assignments fenced by the scheduler's epoch; each taken once,
by its host first and only then by the referee that links its seat 2; each bot's games in
progress over the fleet; and results read once each, though games end out of order. Hosted
bots: each member's free hosted slots, a hosted game's linked seat (either), and where the
scheduler places a game (fleet/scheduler.py's `place`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from maag.server.fleet.assignments import (
    StaleScheduler,
    assign,
    finished_after,
    hosts,
    ladder_load,
    lead,
    listener,
    presence,
    publish_presence,
    settle,
    take,
)
from maag.server.fleet.scheduler import Placement, place
from maag.server.fleet.store import set_link
from maag.server.storage.base import Storage, open_storage


@pytest.fixture
def st(db_url: str) -> Iterator[Storage]:
    s = open_storage(db_url)
    for name, lease in (("r1", 3600.0), ("r2", 3600.0), ("dead", 0.0)):
        s.register_server(name, name, lease)
        set_link(s, name, f"127.0.0.1:{len(name)}")
    yield s
    s.close()


def over(st: Storage, gid: int, winner: int) -> None:
    result = {"winner": winner, "reason": "rules", "plies": 3}
    st.finish_game(gid, {"seed": 1, "actions": [], "result": result})


def test_presence_is_of_live_referees_only_and_replaced_whole(st: Storage) -> None:
    publish_presence(st, "r1", [("a", 2, 10.0), ("b", 1, 11.0)])
    publish_presence(st, "dead", [("c", 1, 12.0)])  # its lease lapsed: not offered
    publish_presence(st, "r2", [("d", 0, 13.0)])  # no free slot: not offered
    assert presence(st) == [("r1", "a", 2, 10.0), ("r1", "b", 1, 11.0)]
    publish_presence(st, "r1", [("b", 1, 11.0)])
    assert presence(st) == [("r1", "b", 1, 11.0)]


def test_a_stale_scheduler_assigns_nothing(st: Storage) -> None:
    old = lead(st, "main")
    new = lead(st, "main")  # another process took the lock
    assert new == old + 1
    with pytest.raises(StaleScheduler):
        assign(st, "main", old, [("r1", ("a", "b"), "r2", "s3cret", 7)])
    assert ladder_load(st, "main", "ladder:main") == {}
    ids = assign(st, "main", new, [("r1", ("a", "b"), "r2", "s3cret", 7),
                                   ("r2", ("c", "d"), "r2", "x", None)])
    assert len(ids) == 2 and ids == sorted(ids)
    assert ladder_load(st, "main", "ladder:main") == {"a": 1, "b": 1, "c": 1, "d": 1}


def test_each_assignment_is_taken_once_host_first(st: Storage) -> None:
    epoch = lead(st, "main")
    [aid] = assign(st, "main", epoch, [("r1", ("a", "b"), "r2", "s3cret", 7)])
    assert take(st, "r2") == ([], [])  # the host has not taken it: no link yet (it would be refused)
    hosted, linked = take(st, "r1")
    assert [a.id for a in hosted] == [aid] and linked == []
    a = hosted[0]
    assert (a.seats, a.server1, a.secret, a.seed, a.link) == (("a", "b"), "r2", "s3cret", 7, "127.0.0.1:2")
    assert take(st, "r1") == ([], [])
    hosted, linked = take(st, "r2")
    assert hosted == [] and [x.id for x in linked] == [aid]
    assert take(st, "r2") == ([], [])
    settle(st, aid, None)  # failed: not counted any more
    assert ladder_load(st, "main", "ladder:main") == {}


def test_running_games_count_and_results_are_read_once(st: Storage) -> None:
    g1 = st.create_game("heroes", {}, ("a", "b"), "1s", "ladder:main", server="r1")
    g2 = st.create_game("heroes", {}, ("c", "d"), "1s", "ladder:main", server="r2")
    g3 = st.create_game("heroes", {}, ("a", "c"), "1s", "other", server="r2")
    assert ladder_load(st, "main", "ladder:main") == {"a": 1, "b": 1, "c": 1, "d": 1}
    over(st, g2, 0)  # the later game ends first
    got, after = finished_after(st, "ladder:main", 0)
    assert [(g[0], g[1], g[2]) for g in got] == [(g2, ("c", "d"), 0)]
    assert after < g1  # g1 still runs: it is read from below it next time
    over(st, g1, 1)
    over(st, g3, 1)
    got, after = finished_after(st, "ladder:main", after)
    assert {g[0] for g in got} == {g1, g2}  # (g2 again: the caller keeps the ids it has seen)
    got, after2 = finished_after(st, "ladder:main", after)
    assert after2 >= g2 and {g[0] for g in finished_after(st, "ladder:main", after2)[0]} == set()
    assert ladder_load(st, "main", "ladder:main") == {}


def test_postgres_announces_new_assignments_to_their_referees(postgres_db: str, tmp_path: Path) -> None:
    s = open_storage(postgres_db)
    try:
        for name in ("r1", "r2", "r3"):
            s.register_server(name, name, 3600.0)
            set_link(s, name, "127.0.0.1:1")
        host, carrier, other = listener(s, "r1"), listener(s, "r2"), listener(s, "r3")
        assert host is not None and carrier is not None and other is not None
        [aid] = assign(s, "main", lead(s, "main"), [("r1", ("a", "b"), "r2", "x", None)])
        assert host.wait(2.0)
        assert not carrier.wait(0.2)  # (not before the host has taken it)
        assert [a.id for a in take(s, "r1")[0]] == [aid]
        assert carrier.wait(2.0)
        assert not other.wait(0.2)
        for x in (host, carrier, other):
            x.close()
    finally:
        s.close()
    lite = open_storage(f"sqlite:///{tmp_path / 'lite.sqlite3'}")
    try:
        assert listener(lite, "r1") is None  # (SQLite: its referees ask)
    finally:
        lite.close()


def test_hosted_slots_and_a_hosted_game_with_seat_1_linked(st: Storage) -> None:
    publish_presence(st, "r1", [], hosting=2)
    publish_presence(st, "r2", [("c", 1, 1.0)], hosting=0)  # hosts nothing now: not offered
    publish_presence(st, "dead", [], hosting=5)  # its lease lapsed: not offered
    assert hosts(st) == {"r1": 2}
    epoch = lead(st, "main")
    # c (connected to r2, which has no hosted slot) in seat 1 against the hosted x@1, on r1.
    [aid] = assign(st, "main", epoch, [("r1", ("c", "x@1"), "r1", "s", 3)], [("r2", 2)])
    assert hosts(st) == {"r1": 1}  # assigned, not taken yet: its slot is counted as taken
    assert ladder_load(st, "main", "ladder:main") == {"c": 1, "x@1": 1}
    assert take(st, "r2") == ([], [])  # the host first
    hosted, linked = take(st, "r1")
    assert linked == [] and [a.id for a in hosted] == [aid]
    a = hosted[0]
    assert a.hosted_seats() == (False, True) and a.linked_seat() == 0 and a.server0 == "r2"
    hosted, linked = take(st, "r2")
    assert hosted == [] and [(x.id, x.linked_seat()) for x in linked] == [(aid, 0)]
    publish_presence(st, "r1", [])  # (hosting=None: it runs no hosted bots any more)
    assert hosts(st) == {}


def test_placement_prefers_the_connected_bots_own_member() -> None:
    hosted = {"x@1", "y@1"}
    where = {"c": {"r2": 1}, "d": {"r1": 1}}
    slots = {"r1": 1, "r2": 1}
    # Hosted against connected: on the connected bot's member when it has a hosted slot.
    assert place(("x@1", "c"), where, slots, hosted) == Placement("r2", ("r2", "r2"), 1)
    assert slots == {"r1": 1, "r2": 0} and where["c"] == {"r2": 0}
    # Else on the member with a free slot, the connected seat linked from its own.
    got = place(("d", "y@1"), {"d": {"r2": 1}}, {"r1": 1, "r2": 0}, hosted)
    assert got == Placement("r1", ("r2", "r1"), 2)
    # Two hosted bots: the member with the most free slots; none left: not placed.
    slots = {"r1": 1, "r2": 2}
    assert place(("x@1", "y@1"), {}, slots, hosted) == Placement("r2", ("r2", "r2"), 3)
    assert place(("x@1", "y@1"), {}, {"r1": 0}, hosted) is None
    # Two connected bots: seat 1's member hosts, as before.
    assert place(("c", "d"), {"c": {"r2": 1}, "d": {"r1": 1}}, {}, hosted) == Placement("r2", ("r2", "r1"), 0)
