"""The lobby's pairing and its limits on who connects, without a socket: connections are
stand-ins with the attributes the lobby reads (server/net/lobby.py), seated by its seating
(server/net/seating.py)."""

from __future__ import annotations

import gc
import weakref
from dataclasses import dataclass, field
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from maag.server.net.lobby import Lobby
from maag.server.net.model import GameRequest, ServerConfig
from maag.server.net.seating import Seating


@dataclass(eq=False)
class Conn:
    bot: str | None
    concurrency: int = 1  # its hello's (given to the seating by `Run.add`)
    pinned: bool = False
    hello_future: Any = None
    free_since: float = 0.0  # when its hello was answered
    closed: bool = False
    peer: Any = ("10.0.0.1", 5000)

    @property
    def closing(self) -> bool:
        return self.closed


@dataclass
class Run:
    """A lobby whose `begin` starts the game at once (the slot goes from reserved to playing)."""

    config: ServerConfig = field(default_factory=ServerConfig)
    games: list[tuple[str, str]] = field(default_factory=list)
    timers: list[float] = field(default_factory=list)
    blocked: bool = False

    def __post_init__(self) -> None:
        self.seating: Seating[None] = Seating()
        self.lobby = Lobby(self.config, seating=self.seating, begin=self.begin, call_later=self.later,
                           blocked=lambda: self.blocked)

    def later(self, delay: float, fn: Any) -> object:
        self.timers.append(delay)
        return object()

    def begin(self, req: GameRequest, a: Conn, b: Conn) -> None:
        gid = str(len(self.games))
        for seat, c in enumerate((a, b)):
            self.seating.release(c)
            self.seating.sit(c, gid, None, seat)
        self.games.append((str(a.bot), str(b.bot)))

    def add(self, *conns: Conn) -> None:
        for c in conns:
            if c.bot is not None:  # (its hello answered)
                self.seating.join(c, concurrency=c.concurrency, max_games=None, now=c.free_since)
        self.lobby.clients.update(conns)

    def playing(self, c: Conn) -> int:
        return len(self.seating.seated(c))


def test_free_bots_are_paired_first_come_first_served_never_with_themselves() -> None:
    r = Run()
    a1, a2 = Conn("a", free_since=1.0), Conn("a", free_since=2.0)
    b = Conn("b", free_since=3.0, concurrency=2)
    r.add(a1, a2, b)
    r.lobby.pair()
    assert sorted(r.games[0]) == ["a", "b"] and sorted(r.games[1]) == ["a", "b"]
    assert len(r.games) == 2  # the two connections of a are never paired together
    assert r.games[0] != r.games[1]  # seats alternate from one game to the next
    r.lobby.pair()
    assert len(r.games) == 2


def test_requests_come_first_in_order_and_wait_for_their_bots() -> None:
    r = Run()
    a, b, c = Conn("a"), Conn("b"), Conn("c")
    r.add(a, b)
    r.lobby.requests.extend([GameRequest(("a", "c")), GameRequest(("b", "a"))])
    r.lobby.pair()
    assert r.games == [("b", "a")]  # c is not connected: its request waits, the next one is played
    assert [q.seats for q in r.lobby.requests] == [("a", "c")]
    r.seating.unseat_all(a)  # its game is over
    r.add(c)
    r.lobby.pair()
    assert r.games[-1] == ("a", "c") and not r.lobby.requests


def test_no_automatic_pairing_while_a_request_waits_nor_for_explicit_only_bots() -> None:
    r = Run()
    a, b, p = Conn("a"), Conn("b"), Conn("person")
    r.add(a, b, p)
    r.lobby.explicit_only.add("person")
    r.lobby.requests.append(GameRequest(("person", "nobody")))
    r.lobby.pair()
    assert r.games == []
    r.lobby.requests.clear()
    r.lobby.pair()
    assert sorted(r.games[0]) == ["a", "b"] and len(r.games) == 1


def test_attached_connections_play_only_the_request_naming_them() -> None:
    r = Run()
    h1, h2 = object(), object()
    x = Conn("host-bot", pinned=True, hello_future=h1)
    y = Conn("other", pinned=True, hello_future=h2)
    free = Conn("host-bot")
    r.add(x, free, Conn("z"))
    r.lobby.requests.append(GameRequest(("host-bot", "other"), clients=(h1, h2)))
    r.lobby.pair()
    assert r.games == [] and len(r.lobby.requests) == 1  # y has not connected yet: x waits for it
    r.add(y)
    r.lobby.pair()
    assert r.games[0] == ("host-bot", "other") and r.playing(x) == 1 and r.playing(y) == 1
    assert sorted(r.games[1]) == ["host-bot", "z"] and r.playing(free) == 1  # then the free ones, at once
    assert r.lobby.connections_of("host-bot") == 1  # attached ones do not count


def test_pairing_waits_while_blocked_or_paused() -> None:
    r = Run(blocked=True)
    r.add(Conn("a"), Conn("b"))
    r.lobby.pair()
    assert r.games == []
    r.blocked = False
    r.lobby.stop()
    r.lobby.pair()
    assert r.games == []


def test_games_per_minute_limit_and_the_pairing_it_schedules() -> None:
    r = Run(ServerConfig(max_games_per_minute=2))
    a, b = Conn("a", concurrency=5), Conn("b", concurrency=5)
    r.add(a, b)
    r.lobby.pair()
    assert len(r.games) == 2
    assert len(r.timers) == 1 and 59.0 < r.timers[0] <= 60.1  # paired again when a minute has passed


def test_connections_before_hello_are_limited_per_address_and_in_all() -> None:
    r = Run(ServerConfig(max_pending_per_address=2, max_pending=3))
    r.add(Conn(None), Conn(None))
    assert r.lobby.over_pending_limit(("10.0.0.1", 1)) is not None
    assert r.lobby.over_pending_limit(("10.0.0.2", 1)) is None
    r.add(Conn(None, peer=("10.0.0.3", 1)))
    assert "max_pending" in str(r.lobby.over_pending_limit(("10.0.0.2", 1)))


def test_failed_logins_are_answered_later_and_later() -> None:
    r = Run(ServerConfig(auth_delay_ms=250, auth_delay_max_ms=1000))
    delays = [r.lobby.auth_delay(["address 1.2.3.4", "name x"]) for _ in range(4)]
    assert delays == [0.25, 0.5, 1.0, 1.0]
    assert r.lobby.auth_delay(["address 5.6.7.8", "name y"]) == 0.25


def test_the_seating_counts_each_connections_free_slots_and_keeps_no_connection_alive() -> None:
    seating: Seating[str] = Seating()
    c = Conn("a")
    assert seating.free(c) == 0  # no hello answered yet
    seating.join(c, concurrency=3, max_games=2, now=5.0)
    assert seating.free(c) == 2 and seating.free_since(c) == 5.0  # capped by max_games
    seating.paired(c)  # a slot held, one game begun
    assert seating.free(c) == 1 and seating.reserved(c) == 1
    seating.release(c)
    seating.sit(c, "g1", "game 1", 0)
    assert seating.seats(c, "g1") == ("game 1", [0]) and seating.free(c) == 1
    link = object()
    seating.add_link(c, "g2", link)  # a seat elsewhere holds a slot, not a game begun here
    assert seating.holds(c, "g2") and seating.free(c) == 1
    assert seating.no_more_games(c) and seating.free(c) == 0  # (a revoked token: max_games = begun)
    assert not seating.drop_link(c, "g2", object()) and seating.drop_link(c, "g2", link, now=7.0)
    seating.unseat(c, "g1", now=8.0)
    assert seating.seated(c) == [] and seating.free_since(c) == 8.0
    c.closed = True
    assert seating.free(c) == 0
    gone = weakref.ref(c)
    del c
    gc.collect()
    assert gone() is None and len(seating) == 0  # its record went with it


_OPS = st.lists(st.tuples(st.sampled_from(["join", "paired", "release", "reserve", "sit", "unseat", "gone",
                                           "unseat_all", "link", "drop_link", "drop_links", "no_more",
                                           "not_played", "close", "pair"]),
                          st.integers(0, 2), st.integers(0, 1), st.integers(0, 2)), max_size=40)


@settings(max_examples=500, deadline=None)
@given(_OPS)
@example([("join", 0, 0, 1), ("sit", 0, 0, 0), ("unseat", 0, 0, 1)])  # a game over frees its slot
@example([("join", 0, 0, 1), ("link", 0, 1, 0), ("drop_link", 0, 1, 0)])
def test_who_may_have_a_free_slot_is_kept_as_it_changes_never_missing_one(
        ops: list[tuple[str, int, int, int]]) -> None:
    """`Seating.maybe_free`, which the lobby pairs from instead of asking every connection,
    holds every connection with a free slot whatever happened to it, and none closing or
    with no slot left; the lobby's automatic pairing on it pairs whoever a scan of every
    connection would have found."""
    run = Run(ServerConfig(auto_pair=True))
    seating = run.seating
    conns = [Conn(f"b{i % 2}") for i in range(3)]
    links: dict[tuple[int, str], object] = {}
    for op, i, g, n in ops:
        c, gid = conns[i], f"g{g}"
        if op == "join":
            seating.join(c, concurrency=n, max_games=None if g == 0 else g, now=float(n))
            run.lobby.clients.add(c)
        elif op == "paired":
            seating.paired(c)
        elif op == "release":
            seating.release(c)
        elif op == "reserve":
            seating.reserve(c)
        elif op == "sit":
            seating.sit(c, gid, None, n % 2, again=n > 1)
        elif op == "unseat":
            seating.unseat(c, gid, now=float(n))
        elif op == "gone":
            seating.unseat(c, gid)
        elif op == "unseat_all":
            seating.unseat_all(c)
        elif op == "link":
            links[i, gid] = object()
            seating.add_link(c, gid, links[i, gid])
        elif op == "drop_link":
            seating.drop_link(c, gid, links.get((i, gid)), now=float(n))
        elif op == "drop_links":
            seating.drop_links(c)
        elif op == "no_more":
            seating.no_more_games(c)
        elif op == "not_played":
            seating.not_played(c)
        elif op == "close":
            c.closed = True
            run.lobby.clients.discard(c)
        else:
            run.lobby.pair()
        loose = seating.maybe_free()
        # (every connection here has its bot: `free` is then exactly what the seating counts)
        assert len(set(map(id, loose))) == len(loose)
        assert {id(x) for x in conns if seating.free(x) > 0} == {id(x) for x in loose}, (op, i)
    # The pairing made from it leaves no two bots free that a scan of every connection would pair.
    run.lobby.pair()
    free = [c for c in run.lobby.clients if seating.free(c) > 0]
    assert len({c.bot for c in free}) <= 1, [(c.bot, seating.free(c)) for c in free]

