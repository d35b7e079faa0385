"""Verdicts: why a game was lost when it was not lost on the board.

GameSession (no sockets, a clock of the test's own):
- lost on time, by illegal actions, by a disconnection without a known cause: verdicts
  `time`, `illegal`, `disconnect`, each naming the seat that lost;
- a fault the server knows (`crash`, `memory`, `protocol`, `startup`): given with `final`
  (a hosted process, which cannot come back) the game ends at once; without it the seat has
  its grace period and the verdict is the fault's;
- a reconnection clears the fault; resignation, the rules and an aborted game carry no
  verdict; the replay's result holds the verdict.

RefereeServer (real sockets, real storage):
- `record_forfeit` stores a game whose replay and `list_games` record carry the verdict, on
  SQLite and on PostgreSQL;
- an attached (hosted) connection that closes in its game with a probe reporting a crash
  ends the game at once with verdict `crash`, its grace period notwithstanding;
- a client that breaks the protocol loses with verdict `protocol` once its grace is over.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from maag.server.net.server import RefereeServer, ServerConfig
from maag.server.referee.clock import TimeControl
from maag.server.referee.policy import LatePolicy, Policy
from maag.server.referee.session import GameSession, Reason
from maag.server.storage.base import Storage, open_storage

TAKE_TOO_MANY = {"type": "take", "pile": 0, "count": 9}   # illegal: pile 0 holds 3
NOT_AN_ACTION = {"type": "fly", "to": [0, 0]}             # not an action of nim
END = {"type": "end_turn"}


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def session(*, tc: str = "inf", **policy: Any) -> tuple[GameSession, Clock]:
    clock = Clock()
    s = GameSession("g1", "nim", ("alpha", "beta"), tc=TimeControl.parse(tc), policy=Policy(**policy),
                    seed=3, clock=clock)
    s.start(now=0.0)
    return s, clock


def verdict_of(s: GameSession) -> dict[str, Any] | None:
    assert s.outcome is not None
    assert s.replay()["result"]["verdict"] == s.outcome.verdict  # the replay holds it
    return s.outcome.verdict


# -- time, illegal, disconnect -----------------------------------------------------------------

def test_lost_on_time_forfeit() -> None:
    s, clock = session(tc="200ms", late=LatePolicy.FORFEIT)
    assert s.to_move == 0
    assert s.tick(0.2) == [] and not s.finished  # within the allowance and the lag
    clock.t = 0.3
    s.tick(0.3)
    assert s.outcome is not None and (s.outcome.winner, s.outcome.reason) == (1, Reason.TIMEOUT)
    assert verdict_of(s) == {"seat": 1, "kind": "time", "detail": "over its time allowance"}


def test_lost_on_time_after_max_late_turns_by_the_second_seat() -> None:
    s, clock = session(tc="200ms", max_late=2)
    for turn in range(2):
        clock.t += 0.1
        s.submit(0, [END], now=clock.t)  # seat 0 plays in time
        assert s.to_move == 1
        clock.t += 0.5
        s.tick(clock.t)  # seat 1 is late: its turn is ended for it
        assert s.seats[1].late_turns == turn + 1 and s.seats[0].late_turns == 0
    assert s.outcome is not None and (s.outcome.winner, s.outcome.reason) == (0, Reason.TIMEOUT)
    assert verdict_of(s) == {"seat": 2, "kind": "time", "detail": "over its time allowance"}


def test_lost_by_illegal_actions() -> None:
    s, clock = session(max_illegal=3)
    s.submit(0, [TAKE_TOO_MANY], now=0.1)
    s.submit(0, [NOT_AN_ACTION], now=0.2)  # malformed ones count too
    assert not s.finished
    s.submit(0, [{"type": "take", "pile": 0, "count": 1}, TAKE_TOO_MANY], now=0.3)  # one applied, one not
    assert s.outcome is not None and (s.outcome.winner, s.outcome.reason) == (1, Reason.ILLEGAL)
    assert verdict_of(s) == {"seat": 1, "kind": "illegal", "detail": "3 illegal or malformed actions"}


def test_a_disconnection_without_a_cause_is_a_disconnect_after_the_grace() -> None:
    s, clock = session(disconnect_grace_ms=1000)
    outs = s.disconnect(1, now=1.0)
    assert [(o.seat, o.msg.to_wire()["kind"]) for o in outs] == [(0, "disconnect")]
    assert s.tick(1.9) == [] and not s.finished
    s.tick(2.0)
    assert s.outcome is not None and (s.outcome.winner, s.outcome.reason) == (0, Reason.DISCONNECT)
    assert verdict_of(s) == {"seat": 2, "kind": "disconnect",
                             "detail": "its connection closed and it did not come back"}


# -- faults ------------------------------------------------------------------------------------

FAULTS = [("crash", "killed by SIGSEGV"), ("memory", "killed at its memory limit of 1073741824 bytes"),
          ("protocol", "bad_frame: not JSON"), ("crash", "exited with code 3")]


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("seat", [0, 1])
def test_a_final_fault_ends_the_game_at_once(seat: int, fault: tuple[str, str]) -> None:
    s, clock = session(disconnect_grace_ms=60_000)
    assert s.disconnect(seat, now=0.5, fault=fault, final=True) == []  # nobody to tell: it is over
    assert s.outcome is not None
    assert (s.outcome.winner, s.outcome.reason) == (1 - seat, Reason.DISCONNECT)
    assert verdict_of(s) == {"seat": seat + 1, "kind": fault[0], "detail": fault[1]}
    assert s.replay()["tags"]["Reason"] == "disconnect"
    # Nothing afterwards changes it.
    assert s.disconnect(1 - seat, now=0.6, fault=("crash", "x"), final=True) == []
    assert s.tick(100.0) == []
    assert s.outcome.verdict == {"seat": seat + 1, "kind": fault[0], "detail": fault[1]}


@pytest.mark.parametrize("fault", FAULTS)
def test_a_fault_without_final_waits_for_the_grace(fault: tuple[str, str]) -> None:
    s, clock = session(disconnect_grace_ms=500)
    assert s.disconnect(0, now=1.0, fault=fault) != []  # the opponent is told
    assert s.tick(1.4) == [] and not s.finished
    s.tick(1.5)
    assert s.outcome is not None and (s.outcome.winner, s.outcome.reason) == (1, Reason.DISCONNECT)
    assert verdict_of(s) == {"seat": 1, "kind": fault[0], "detail": fault[1]}


def test_no_grace_at_all_ends_at_once_with_the_fault() -> None:
    s, clock = session(disconnect_grace_ms=0)
    s.disconnect(1, now=0.2, fault=("protocol", "frame_too_large: 70000 bytes"))
    assert verdict_of(s) == {"seat": 2, "kind": "protocol", "detail": "frame_too_large: 70000 bytes"}


def test_a_reconnection_clears_the_fault() -> None:
    s, clock = session(disconnect_grace_ms=1000)
    s.disconnect(0, now=1.0, fault=("protocol", "bad_frame: not JSON"))
    outs = s.reconnect(0, now=1.5)
    assert [o.msg.to_wire()["type"] for o in outs if o.seat == 0][:1] == ["game_start"]
    assert s.faults[0] is None
    s.disconnect(0, now=2.0)  # gone again, for no known reason
    s.tick(3.0)
    assert verdict_of(s) == {"seat": 1, "kind": "disconnect",
                             "detail": "its connection closed and it did not come back"}


def test_back_in_time_and_then_lost_on_the_board_has_no_verdict() -> None:
    s, clock = session(disconnect_grace_ms=1000)
    s.disconnect(1, now=0.1, fault=("crash", "killed by SIGKILL"))
    s.reconnect(1, now=0.2)
    _play_out(s, clock)
    assert s.outcome is not None and s.outcome.reason == Reason.RULES
    assert verdict_of(s) is None


def _play_out(s: GameSession, clock: Clock) -> None:
    """Both seats take everything they can until the game ends by the rules."""
    for _ in range(50):
        if s.finished:
            return
        clock.t += 0.01
        piles = s.state.to_json()["piles"]
        takes = [{"type": "take", "pile": i, "count": n} for i, n in enumerate(piles) if n][:2]
        s.submit(s.to_move, [*takes, END], now=clock.t)
    raise AssertionError("the game did not end")


def test_resignation_has_no_verdict_even_with_a_fault_pending() -> None:
    s, clock = session(disconnect_grace_ms=1000)
    s.disconnect(0, now=0.1, fault=("crash", "killed by SIGABRT"))
    s.resign(0, now=0.2)
    assert s.outcome is not None and (s.outcome.winner, s.outcome.reason) == (1, Reason.RESIGN)
    assert verdict_of(s) is None


def test_rules_and_abort_have_no_verdict() -> None:
    s, clock = session()
    _play_out(s, clock)
    assert s.outcome is not None and s.outcome.reason == Reason.RULES and s.outcome.winner in (0, 1)
    assert verdict_of(s) is None
    s, clock = session()
    s.disconnect(0, now=0.1, fault=("crash", "killed by SIGSEGV"))
    s.abort("server shutdown")
    assert s.outcome is not None and s.outcome.reason == Reason.ABORTED and s.outcome.winner is None
    assert verdict_of(s) is None


# -- the referee server -------------------------------------------------------------------------

@pytest.fixture(params=["sqlite", "postgres"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    if request.param == "sqlite":
        return open_storage(f"sqlite:///{tmp_path / 'maag.sqlite3'}")
    return open_storage(str(request.getfixturevalue("postgres_db")))


@pytest.fixture
async def server_factory(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    made: list[RefereeServer] = []

    async def make(storage: Storage | None = None, **kw: Any) -> RefereeServer:
        kw.setdefault("tc", TimeControl.parse("2s"))
        kw.setdefault("auto_pair", False)
        srv = RefereeServer(ServerConfig(port=0, game="nim", **kw),
                            storage or open_storage(f"sqlite:///{tmp_path / f'r{len(made)}.sqlite3'}"))
        await srv.start()
        made.append(srv)
        return srv

    yield make
    for srv in made:
        await srv.stop()
        srv.storage.storage.close()


MakeServer = Callable[..., Any]


async def test_record_forfeit_stores_the_verdict(storage: Storage, server_factory: MakeServer) -> None:
    srv = await server_factory(storage)
    summary = await srv.record_forfeit(("alpha", "beta"), 1, "startup", "no hello within 10 s",
                                       match_id="m1", tags={"Round": 3}, seed=5)
    verdict = {"seat": 2, "kind": "startup", "detail": "no hello within 10 s"}
    assert summary.stored and summary.verdict == verdict
    assert (summary.winner, summary.reason, summary.plies) == (0, "disconnect", 0)
    st = srv.storage.storage
    [rec] = st.list_games(match_id="m1")
    assert rec.id == summary.game_id and rec.status == "finished" and rec.seats == ("alpha", "beta")
    assert (rec.winner, rec.reason, rec.verdict) == (0, "disconnect", verdict)
    got = st.get_game(summary.game_id)
    assert got is not None and got.verdict == verdict
    replay = st.get_replay(summary.game_id)
    assert replay is not None and replay["result"]["verdict"] == verdict
    assert replay["tags"]["Round"] == 3 and replay["tags"]["Result"] == "1-0" and replay["actions"] == []
    # A game lost on the board beside it has none.
    other = st.create_game("nim", {}, ("alpha", "beta"), "2s", "m1")
    st.finish_game(other, {"game": "nim", "seed": 1, "actions": [],
                           "result": {"winner": 1, "reason": "rules", "plies": 9, "verdict": None}})
    by_id = {g.id: g for g in st.list_games(match_id="m1")}
    assert by_id[other].verdict is None and by_id[summary.game_id].verdict == verdict


class Wire:
    """A JSON-lines protocol client on any stream."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        writer.write(b"MAAG 1 json\n")

    def send(self, msg: dict[str, Any]) -> None:
        self.writer.write(json.dumps({"v": 1, **msg}).encode() + b"\n")

    async def until(self, kind: str) -> dict[str, Any]:
        while True:
            line = await asyncio.wait_for(self.reader.readline(), 20)
            assert line, f"closed while waiting for {kind}"
            m = json.loads(line)
            if m["type"] == kind:
                return dict(m)

    async def hello(self, name: str, token: str) -> None:
        self.send({"type": "hello", "name": name, "token": token, "games": ["nim"]})
        await self.until("welcome")


async def test_a_hosted_connection_that_crashes_ends_its_game_at_once(server_factory: MakeServer) -> None:
    srv = await server_factory(policy=Policy(disconnect_grace_ms=60_000))
    wires, handles = [], []
    for i, name in enumerate(("alpha", "beta")):
        ours, theirs = socket.socketpair()
        token = "t_" + secrets.token_hex(8)
        srv.add_token(token, name)

        async def probe(i: int = i) -> tuple[str, str] | None:
            return ("crash", "killed by SIGSEGV") if i == 0 else None

        handles.append(srv.attach(ours, probe=probe))
        reader, writer = await asyncio.open_connection(sock=theirs)
        wires.append(Wire(reader, writer))
        await wires[-1].hello(name, token)
    assert [await asyncio.wait_for(h, 10) for h in handles] == ["alpha", "beta"]
    fut = srv.request_game("alpha", "beta", match_id="hosted", clients=(handles[0], handles[1]),
                           requeue=False)
    for w in wires:
        await w.until("game_start")
    t0 = time.monotonic()
    wires[0].writer.close()  # alpha's process is gone
    summary = await asyncio.wait_for(fut, 10)
    assert time.monotonic() - t0 < 5  # not after the minute of grace
    verdict = {"seat": 1, "kind": "crash", "detail": "killed by SIGSEGV"}
    assert (summary.winner, summary.reason, summary.verdict) == (1, "disconnect", verdict)
    over = await wires[1].until("game_over")
    assert (over["winner"], over["reason"]) == (2, "disconnect")
    st = srv.storage.storage
    [rec] = st.list_games(match_id="hosted")
    assert rec.verdict == verdict
    replay = st.get_replay(rec.id)
    assert replay is not None and replay["result"]["verdict"] == verdict
    wires[1].writer.close()


async def test_a_protocol_breaker_loses_with_verdict_protocol(server_factory: MakeServer) -> None:
    srv = await server_factory(policy=Policy(disconnect_grace_ms=300))
    wires = []
    for name in ("alpha", "beta"):
        token = "t_" + secrets.token_hex(8)
        srv.add_token(token, name)
        reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
        wires.append(Wire(reader, writer))
        await wires[-1].hello(name, token)
    fut = srv.request_game("alpha", "beta", match_id="proto")
    for w in wires:
        await w.until("game_start")
    wires[1].writer.write(b"{this is not json\n")
    err = await wires[1].until("error")
    summary = await asyncio.wait_for(fut, 10)
    assert (summary.winner, summary.reason) == (0, "disconnect")
    assert summary.verdict is not None
    assert (summary.verdict["seat"], summary.verdict["kind"]) == (2, "protocol")
    assert err["code"] in summary.verdict["detail"]
    [rec] = srv.storage.storage.list_games(match_id="proto")
    assert rec.verdict == summary.verdict
    for w in wires:
        w.writer.close()
