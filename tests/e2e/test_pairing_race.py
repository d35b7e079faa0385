"""A bot whose connection is closing when a game ends must not be paired into a new game it
would then lose by disconnect (docs/server.md, Policies: closing before a game starts).

The race needs two things pending in the same turn of the event loop: the storage thread's
completion of a game write (after which the referee pairs, or starts a paired game) and the
peer's EOF on the socket. The test makes that happen every time: the referee runs in the
test's own event loop, so the test can half-close a bot's socket and then block the loop
until the storage thread is idle and the FIN has reached the referee's socket. When the loop
runs again, the storage completion is handled first (it was queued before the loop polled
the sockets), the EOF right after, and the read task that would forget the connection only
after the referee has resumed.

For that the write must still be unfinished when the loop is blocked. A fast write could
otherwise complete while the test task is still running its own steps: its completion would
then be handled a loop turn early, the referee's task woken before the EOF was even polled,
and the closing connection paired (this failed in the whole suite, never alone). So the test
holds the storage thread with a job of its own before the game ends and lets it go only
while the loop is blocked.
"""

from __future__ import annotations

import asyncio
import select
import threading

import pytest
from maag.server.net.server import GameNotStarted, RefereeServer
from maag.server.net.transport import Client as _Client
from maag.server.referee.clock import TimeControl
from maag.server.referee.session import Policy

from .conftest import WAIT, MakeServer, Raw, token_for, until


def hold_loop(srv: RefereeServer, conn: _Client, gate: threading.Event | None = None) -> None:
    """Block this thread, which runs the referee's event loop, until the peer's EOF is waiting
    on the referee's end of connection `conn` and then every storage job the referee has
    submitted is done (its completion queued for the loop). `gate`, if given, holds the
    storage thread (see `hold_storage`) and is opened once the EOF is there."""
    # The referee has read everything the peer sent before its EOF, so its socket becomes
    # readable only when the FIN has arrived (select leaves the socket's state alone).
    assert conn.sock is not None
    readable, _, _ = select.select([conn.sock.fileno()], [], [], WAIT)
    assert readable, "the peer's EOF did not arrive (hang guard)"
    if gate is not None:
        gate.set()
    # The storage runs its jobs in order on one thread: once this empty job has run, every
    # earlier job has finished and scheduled its completion callback on the loop.
    srv.storage.thread.submit(lambda: None).result(timeout=WAIT)


def hold_storage(srv: RefereeServer) -> threading.Event:
    """Occupy the storage's one thread until the returned event is set: jobs the referee
    submits meanwhile wait in its queue and cannot complete early."""
    gate = threading.Event()
    started = threading.Event()

    def blocker() -> None:
        started.set()
        gate.wait(WAIT)

    srv.storage.thread.submit(blocker)
    assert started.wait(WAIT)
    return gate


def storage_queued(srv: RefereeServer) -> int:
    """Jobs waiting behind the storage thread's current one."""
    return srv.storage.thread.queued()


async def step() -> None:
    """One turn of the event loop."""
    await asyncio.sleep(0)


@pytest.mark.parametrize("pairing", ["auto", "request"])
@pytest.mark.parametrize("when", ["before_pairing", "before_game_start"])
async def test_bot_closing_at_game_over_is_not_paired_into_a_forfeit(
    referee: MakeServer, pairing: str, when: str
) -> None:
    """Bot `a` resigns its game against `b` and half-closes its socket: either while the
    referee stores the finished game (its EOF is pending when the referee pairs the freed
    slots) or right after the referee paired it again (before the new game's first message).
    A free bot waits for a game meanwhile: `b`'s second connection with automatic pairing,
    or `c` with a queued request `a` vs `c`. The waiting bot must never get a game against
    the closing connection, no result may be recorded by disconnect, and a queued request
    must stay queued until `a` is back."""
    auto = pairing == "auto"
    srv = await referee(game_config={"map": "a-tiny"}, tc=TimeControl.parse("inf"), auto_pair=auto,
                        max_connections_per_bot=2, policy=Policy(disconnect_grace_ms=0))
    ta, tb = token_for(srv, "a"), token_for(srv, "b")
    a, b = await Raw.connect(srv.port), await Raw.connect(srv.port)
    await a.hello(ta, "a")
    await b.hello(tb, "b")
    if not auto:
        srv.request_game("a", "b")
    first = await a.recv_type("game_start")
    await b.recv_type("game_start")
    waiting = await Raw.connect(srv.port)
    if auto:
        await waiting.hello(tb, "b")  # b's second connection: pairs with any bot but b
        fut = None
    else:
        await waiting.hello(token_for(srv, "c"), "c")
        fut = srv.request_game("a", "c")
    assert all(srv.seating.free(c) == 0 for c in srv.clients if c.bot == "a")

    client_a = next(c for c in srv.clients if c.bot == "a")
    game = srv.games[first["game_id"]]
    gate = None
    if when == "before_pairing":
        gate = hold_storage(srv)  # the game's write waits until the loop is held
    a.send({"type": "resign", "game_id": first["game_id"]})
    if when == "before_pairing":
        while not game.ending or storage_queued(srv) == 0:  # until the write is submitted
            await step()
        assert first["game_id"] in srv.games  # and waits: nothing is paired yet
    else:
        # Paired again. No yielding from here to hold_loop: the new game's task has either
        # not run yet (it asks for its storage row in the loop turn that also reads the EOF)
        # or is waiting for its row, whose completion must still be queued when the EOF is.
        while srv.seating.reserved(client_a) == 0:
            await step()
    a.writer.write_eof()
    hold_loop(srv, client_a, gate)
    if when == "before_game_start":
        # Wait for the row (the storage thread may be slow): the game is then started or
        # called off. Until then `a`'s connection may already be gone and nothing decided.
        while srv.seating.reserved(client_a):
            await step()
    if when == "before_pairing":
        while first["game_id"] in srv.games:  # until the game over is sent and the free slots paired
            await step()
        # The closing connection was not offered.
        assert srv.seating.reserved(client_a) == 0 and not srv.seating.seated(client_a)

    await until(lambda: all(c.bot != "a" for c in srv.clients))
    if auto:
        late = await Raw.connect(srv.port)
        await late.hello(token_for(srv, "d"), "d")
        start = await waiting.recv_type("game_start")
        assert start["opponent"] == "d"  # not a game against the closed connection
    else:
        assert fut is not None and not fut.done()
        assert list(srv.requests) and srv.requests[0].future is fut  # still queued, still first
        late = await Raw.connect(srv.port)
        await late.hello(ta, "a")  # a is back: the queued request is played now
        start = await late.recv_type("game_start")
        assert start["opponent"] == "c"
        assert (await waiting.recv_type("game_start"))["game_id"] == start["game_id"]
        late.send({"type": "resign", "game_id": start["game_id"]})
        summary = await asyncio.wait_for(fut, WAIT)
        assert (summary.reason, summary.winner) == ("resign", 1)
    games = srv.storage.storage.list_games()
    assert "disconnect" not in {g.reason for g in games}
    # A game cancelled between its pairing and its first message is stored as aborted.
    others = [g.status for g in games if str(g.id) not in (first["game_id"], start["game_id"])]
    assert others == ([] if when == "before_pairing" else ["aborted"])


async def test_request_without_requeue_fails_when_a_seat_closes_before_the_game_starts(
    referee: MakeServer,
) -> None:
    """The ladder's kind of request (`requeue=False`): `a` closes right after the referee
    paired it with `c`. The request is not queued again (it would hold `c` for as long as `a`
    is away); its future fails with GameNotStarted, the game is stored aborted, and `c` is
    free for another game at once."""
    srv = await referee(game_config={"map": "a-tiny"}, tc=TimeControl.parse("inf"), auto_pair=False,
                        policy=Policy(disconnect_grace_ms=0))
    a, c = await Raw.connect(srv.port), await Raw.connect(srv.port)
    await a.hello(token_for(srv, "a"), "a")
    await c.hello(token_for(srv, "c"), "c")
    client_a = next(x for x in srv.clients if x.bot == "a")
    fut = srv.request_game("a", "c", requeue=False)
    assert srv.seating.reserved(client_a) == 1  # paired at once; the game waits for its storage row
    a.writer.write_eof()
    hold_loop(srv, client_a)
    with pytest.raises(GameNotStarted):
        await asyncio.wait_for(fut, WAIT)
    assert not srv.requests
    await until(lambda: all(x.bot != "a" for x in srv.clients))
    d = await Raw.connect(srv.port)
    await d.hello(token_for(srv, "d"), "d")
    again = srv.request_game("c", "d", requeue=False)
    start = await c.recv_type("game_start")
    assert start["opponent"] == "d"
    c.send({"type": "resign", "game_id": start["game_id"]})
    summary = await asyncio.wait_for(again, WAIT)
    assert (summary.reason, summary.winner) == ("resign", 1)
    await until(lambda: len(srv.storage.storage.list_games()) == 2)
    statuses = sorted(g.status for g in srv.storage.storage.list_games())
    assert statuses == ["aborted", "finished"]


@pytest.mark.parametrize("start_state", [{"garbage": 1}, {"turn": 1, "board": "not a list"}])
async def test_a_start_state_the_engine_refuses_fails_the_request_and_is_stored_aborted(
    referee: MakeServer, start_state: dict[str, object],
) -> None:
    """Setting up the game's session fails (a start state the engine refuses): the request's
    future fails with GameNotStarted naming why (it used to wait forever, the row left
    `running`), the row is stored aborted, and both bots are free to play at once."""
    srv = await referee(game_config={"map": "a-tiny"}, tc=TimeControl.parse("inf"), auto_pair=False)
    a, b = await Raw.connect(srv.port), await Raw.connect(srv.port)
    await a.hello(token_for(srv, "a"), "a")
    await b.hello(token_for(srv, "b"), "b")
    fut = srv.request_game("a", "b", start_state=start_state)
    with pytest.raises(GameNotStarted, match="could not start: StateError"):
        await asyncio.wait_for(fut, WAIT)
    await until(lambda: [g.status for g in srv.storage.storage.list_games()] == ["aborted"])
    [row] = srv.storage.storage.list_games()
    assert srv.storage.storage.get_replay(row.id)["result"]["reason"] == "aborted"  # type: ignore[index]
    again = srv.request_game("a", "b")
    start = await a.recv_type("game_start")
    a.send({"type": "resign", "game_id": start["game_id"]})
    summary = await asyncio.wait_for(again, WAIT)
    assert summary.reason == "resign"
    assert sorted(g.status for g in srv.storage.storage.list_games()) == ["aborted", "finished"]
