"""Bad and hostile clients over real sockets. Each case gets its documented response
(docs/protocol.md, section 4; the referee's policies), the server keeps running, and a game
between two real bot processes that is in progress meanwhile ends normally."""

from __future__ import annotations

import asyncio
import signal
import struct
from collections.abc import Awaitable, Callable
from typing import Any

import msgpack
import pytest
from maag.protocol import PROTOCOL_VERSION
from maag.server.net.server import RefereeServer
from maag.server.referee.clock import TimeControl
from maag.server.referee.replay import resimulate
from maag.server.referee.session import Policy

from .conftest import WAIT, MakeServer, Raw, spawn_minibot, stop_process, token_for, until

TINY = {"map": "a-tiny"}


async def fatal(raw: Raw, code: str, v: int = 1) -> None:
    """The server answers with one error of `code` (no game_id) and closes; `v`: the
    connection's version (Raw greets with 1; before a good greeting, the server's own)."""
    msgs = await raw.closed()
    assert [m["type"] for m in msgs] == ["error"], msgs
    assert msgs[0]["code"] == code and msgs[0]["message"] and "game_id" not in msgs[0], msgs
    assert msgs[0]["v"] == v


async def welcomed(srv: RefereeServer, encoding: str = "json", name: str = "raw") -> Raw:
    raw = await Raw.connect(srv.port, encoding)
    await raw.hello(token_for(srv, name), name)
    return raw


# -- connection-level violations: one error, then the server closes ---------------------------


async def garbage_bytes(srv: RefereeServer) -> None:
    raw = await Raw.connect(srv.port, None)
    raw.send_raw(b"\x00\xff\xfeGARBAGE\r\n\x89PNG")
    await fatal(raw, "bad_greeting", PROTOCOL_VERSION)


async def unsupported_version(srv: RefereeServer) -> None:
    raw = await Raw.connect(srv.port, None)
    raw.send_raw(b"MAAG 7 json\n")
    await fatal(raw, "unsupported_version", PROTOCOL_VERSION)


async def truncated_frame(srv: RefereeServer) -> None:
    raw = await welcomed(srv, "msgpack")
    raw.send_raw(struct.pack(">I", 100) + b"\x81\xa4type")  # 100 announced, 7 sent, then EOF
    raw.writer.write_eof()
    msgs = await raw.closed()
    assert all(m["type"] == "error" and m["code"] == "truncated_frame" for m in msgs), msgs


async def oversized_msgpack_frame(srv: RefereeServer) -> None:
    raw = await welcomed(srv, "msgpack")
    raw.send_raw(struct.pack(">I", 50_000_000))  # the body is never sent: refused on the prefix
    await fatal(raw, "frame_too_large")


async def oversized_json_line(srv: RefereeServer) -> None:
    raw = await welcomed(srv, "json")
    raw.send_raw(b'{"type":"ping","v":1,"id":"' + b"x" * 10_000)
    await fatal(raw, "frame_too_large")


async def zero_length_frame(srv: RefereeServer) -> None:
    raw = await welcomed(srv, "msgpack")
    raw.send_raw(b"\x00\x00\x00\x00")
    await fatal(raw, "bad_frame")


async def invalid_msgpack(srv: RefereeServer) -> None:
    raw = await Raw.connect(srv.port, "msgpack")
    raw.send_raw(struct.pack(">I", 3) + b"\xc1\xc1\xc1")  # 0xc1 is never valid msgpack
    await fatal(raw, "bad_encoding")


async def invalid_json(srv: RefereeServer) -> None:
    raw = await Raw.connect(srv.port, "json")
    raw.send_raw(b"{type: hello, not json}\n")
    await fatal(raw, "bad_encoding")


async def not_a_map(srv: RefereeServer) -> None:
    raw = await Raw.connect(srv.port, "msgpack")
    body = msgpack.packb([1, 2, 3])
    raw.send_raw(struct.pack(">I", len(body)) + body)
    await fatal(raw, "bad_encoding")


async def unknown_type(srv: RefereeServer) -> None:
    raw = await welcomed(srv)
    raw.send({"type": "dance", "steps": 3})
    await fatal(raw, "unknown_type")


async def missing_field(srv: RefereeServer) -> None:
    raw = await Raw.connect(srv.port)
    raw.send({"type": "hello", "name": "x", "games": ["heroes"]})
    await fatal(raw, "missing_field")


async def mistyped_field(srv: RefereeServer) -> None:
    raw = await Raw.connect(srv.port)
    raw.send({"type": "hello", "name": 5, "token": "t", "games": ["heroes"]})
    await fatal(raw, "bad_field")


async def missing_version(srv: RefereeServer) -> None:
    raw = await Raw.connect(srv.port)
    raw.send({"type": "hello", "name": "x", "token": "t", "games": ["heroes"]}, v=False)
    await fatal(raw, "missing_field")


async def act_before_hello(srv: RefereeServer) -> None:
    raw = await Raw.connect(srv.port)
    raw.send({"type": "act", "game_id": "1", "action": {"type": "end_turn"}})
    await fatal(raw, "unexpected_message")


async def second_hello(srv: RefereeServer) -> None:
    raw = await welcomed(srv)
    raw.send({"type": "hello", "name": "raw", "token": "t", "games": ["heroes"]})
    await fatal(raw, "unexpected_message")


async def server_message_from_client(srv: RefereeServer) -> None:
    raw = await welcomed(srv)
    raw.send({"type": "pong", "id": 1})
    await fatal(raw, "unexpected_message")


async def bad_token(srv: RefereeServer) -> None:
    raw = await Raw.connect(srv.port)
    raw.send({"type": "hello", "name": "x", "token": "nope", "games": ["heroes"]})
    await fatal(raw, "auth_failed")


async def already_connected(srv: RefereeServer) -> None:
    token = token_for(srv, "twin")
    first = await Raw.connect(srv.port)
    await first.hello(token, "twin")
    second = await Raw.connect(srv.port)
    second.send({"type": "hello", "name": "twin", "token": token, "games": ["heroes"]})
    await fatal(second, "already_connected")
    first.send({"type": "ping", "id": "still here"})  # the first connection is kept
    assert await first.recv_type("pong") == {"type": "pong", "v": 1, "id": "still here"}


async def unsupported_game(srv: RefereeServer) -> None:
    raw = await Raw.connect(srv.port)
    raw.send({"type": "hello", "name": "x", "token": token_for(srv, "x"), "games": ["chess"]})
    await fatal(raw, "unsupported_game")


async def flooding(srv: RefereeServer) -> None:
    raw = await welcomed(srv)
    raw.send_raw(b"".join(b'{"type":"ping","v":1,"id":%d}\n' % i for i in range(3000)))
    msgs = await raw.closed()
    assert msgs and all(m["type"] == "pong" for m in msgs[:-1])
    assert msgs[-1]["type"] == "error" and msgs[-1]["code"] == "rate_limited"
    assert len(msgs) - 1 <= srv.config.max_rate


async def unknown_game_is_not_fatal(srv: RefereeServer) -> None:
    raw = await welcomed(srv)
    raw.send({"type": "act", "game_id": "999", "action": {"type": "end_turn"}})
    m = await raw.recv_type("result")
    assert m["game_id"] == "999" and m["accepted"] == 0 and m["error"] == "unknown_game"
    raw.send({"type": "resign", "game_id": "999"})
    m = await raw.recv_type("error")
    assert m["code"] == "unknown_game" and m["game_id"] == "999"
    raw.send({"type": "ping", "id": 2})
    assert (await raw.recv_type("pong"))["id"] == 2
    raw.close()


CASES: list[Callable[[RefereeServer], Awaitable[None]]] = [
    garbage_bytes,
    unsupported_version,
    truncated_frame,
    oversized_msgpack_frame,
    oversized_json_line,
    zero_length_frame,
    invalid_msgpack,
    invalid_json,
    not_a_map,
    unknown_type,
    missing_field,
    mistyped_field,
    missing_version,
    act_before_hello,
    second_hello,
    server_message_from_client,
    bad_token,
    already_connected,
    unsupported_game,
    flooding,
    unknown_game_is_not_fatal,
]


async def start_background_game(srv: RefereeServer) -> tuple[asyncio.Future[Any], list[Any]]:
    """A game between two real bot processes, slowed down so it is in progress meanwhile."""
    procs = [
        await spawn_minibot(srv.port, token_for(srv, name), "--delay", "2", "--seed", str(i))
        for i, name in enumerate(("bg1", "bg2"))
    ]
    fut = srv.request_game("bg1", "bg2")
    await until(lambda: any(g.session.log for g in srv.games.values()))
    return fut, procs


async def check_background_game(srv: RefereeServer, fut: asyncio.Future[Any], procs: list[Any]) -> None:
    summary = await asyncio.wait_for(fut, WAIT)
    for p in procs:
        await stop_process(p)
    assert summary.reason in ("rules", "turn_limit"), summary
    replay = srv.storage.storage.get_replay(summary.game_id)
    assert replay is not None
    assert replay["clock"]["illegal"] == [0, 0] and replay["clock"]["late_turns"] == [0, 0]
    assert resimulate(replay).plies == summary.plies


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
async def test_connection_violation(
    referee: MakeServer, case: Callable[[RefereeServer], Awaitable[None]]
) -> None:
    srv = await referee(game_config=TINY, max_rate=300, max_frame=4096)
    fut, procs = await start_background_game(srv)
    await asyncio.wait_for(case(srv), WAIT)
    assert not fut.done() or fut.result().reason in ("rules", "turn_limit")
    await check_background_game(srv, fut, procs)
    # The server still takes new connections.
    raw = await welcomed(srv, name="after")
    raw.send({"type": "ping", "id": "ok"})
    assert (await raw.recv_type("pong"))["id"] == "ok"


# -- game-level misbehaviour: a raw seat against a real bot process ------------------------------


async def game_with_raw_seat(
    srv: RefereeServer, raw_seat: int = 1
) -> tuple[Raw, Any, asyncio.Future[Any], str]:
    """A game in which seat `raw_seat` (1 or 2) is a raw client and the other a minibot."""
    raw = await welcomed(srv, name="raw")
    bot = await spawn_minibot(srv.port, token_for(srv, "bot"), "--seed", "5")
    await until(lambda: any(c.bot == "bot" for c in srv.clients))
    seats = ("raw", "bot") if raw_seat == 1 else ("bot", "raw")
    fut = srv.request_game(*seats)
    start = await raw.recv_type("game_start")
    assert start["seat"] == raw_seat and start["opponent"] == "bot"
    return raw, bot, fut, start["game_id"]


async def test_wrong_seat_out_of_turn_and_illegal_actions(referee: MakeServer) -> None:
    srv = await referee(game_config=TINY, policy=Policy(max_illegal=3), tc=TimeControl.parse("inf"))
    bg, procs = await start_background_game(srv)
    one, two = await welcomed(srv, name="one"), await welcomed(srv, name="two")
    fut = srv.request_game("one", "two")
    gid = (await one.recv_type("game_start"))["game_id"]
    await two.recv_type("game_start")
    yt = await one.recv_type("your_turn")
    # Seat 1 is to move: anything from seat 2 is out of turn (no penalty), or for a seat it
    # does not hold.
    two.send({"type": "act", "game_id": gid, "action": {"type": "end_turn"}})
    res = await two.recv_type("result")
    assert res["error"] == "not_your_turn" and res["accepted"] == 0
    two.send({"type": "act", "game_id": gid, "seat": 1, "action": {"type": "end_turn"}})
    assert (await two.recv_type("result"))["error"] == "wrong_seat"
    two.send({"type": "turn", "game_id": "g-other", "actions": [{"type": "end_turn"}]})
    assert (await two.recv_type("result"))["error"] == "unknown_game"
    assert yt["observation"]["observer"] == 1 and yt["observation"]["hands"]["2"] == []
    # An illegal action: refused with the rule, state unchanged, a new your_turn.
    one.send({"type": "act", "game_id": gid, "action": {"type": "move", "from": [0, 0], "to": [4, 2]}})
    res = await one.recv_type("result")
    assert res["error"] == "illegal_action" and res["accepted"] == 0 and res["message"]
    again = await one.recv_type("your_turn")
    assert again["observation"] == yt["observation"]
    one.send({"type": "turn", "game_id": gid, "actions": [{"type": "fly"}]})
    assert (await one.recv_type("result"))["error"] == "bad_action"
    await one.recv_type("your_turn")
    one.send({"type": "act", "game_id": gid, "action": {"type": "attack", "from": [0, 0], "to": [4, 2]}})
    assert (await one.recv_type("result"))["error"] == "illegal_action"
    over = await one.recv_type("game_over")
    assert over["reason"] == "illegal_actions" and over["winner"] == 2
    assert await two.recv_type("game_over") == over
    summary = await asyncio.wait_for(fut, WAIT)
    assert summary.reason == "illegal_actions" and str(summary.game_id) == over["replay_id"]
    await check_background_game(srv, bg, procs)


async def test_bot_that_never_answers_loses_on_time(referee: MakeServer) -> None:
    srv = await referee(game_config=TINY, tc=TimeControl.parse("100ms,lag=10ms"), policy=Policy(max_late=2))
    bg, procs = await start_background_game(srv)
    raw, bot, fut, gid = await game_with_raw_seat(srv, raw_seat=1)
    await raw.recv_type("your_turn")
    ev = await raw.recv_type("event")  # ... and say nothing
    assert ev == {"type": "event", "v": 1, "game_id": gid, "seat": 1, "kind": "timeout"}
    over = await raw.recv_type("game_over")
    assert over["reason"] == "timeout" and over["winner"] == 2
    replay = srv.storage.storage.get_replay(int(over["replay_id"]))
    assert replay is not None and replay["clock"]["late_turns"][0] == 2
    assert any(a.get("auto") for a in replay["actions"]) and resimulate(replay).reason == "timeout"
    await stop_process(bot)
    await check_background_game(srv, bg, procs)


async def test_bot_killed_mid_turn_forfeits_after_grace(referee: MakeServer) -> None:
    srv = await referee(game_config=TINY, tc=TimeControl.parse("inf"), policy=Policy(disconnect_grace_ms=300))
    bg, procs = await start_background_game(srv)
    raw = await welcomed(srv, name="raw")
    # The bot thinks slowly (1 s per action), so it is killed while it is on move.
    victim = await spawn_minibot(srv.port, token_for(srv, "victim"), "--delay", "1000")
    await until(lambda: any(c.bot == "victim" for c in srv.clients))
    fut = srv.request_game("victim", "raw")
    await raw.recv_type("game_start")
    await until(lambda: any(g.session.t0 is not None and g.bots[0] == "victim" for g in srv.games.values()))
    victim.send_signal(signal.SIGKILL)
    await victim.wait()
    ev = await raw.recv_type("event")
    assert ev["kind"] == "disconnect" and ev["seat"] == 1
    over = await raw.recv_type("game_over")
    assert over["reason"] == "disconnect" and over["winner"] == 2
    assert (await asyncio.wait_for(fut, WAIT)).reason == "disconnect"
    await check_background_game(srv, bg, procs)


async def test_reconnect_within_grace_resumes_the_game(referee: MakeServer) -> None:
    srv = await referee(
        game_config=TINY, tc=TimeControl.parse("inf"), policy=Policy(disconnect_grace_ms=20_000)
    )
    token = token_for(srv, "comeback")
    first = await Raw.connect(srv.port)
    await first.hello(token, "comeback")
    bot = await spawn_minibot(srv.port, token_for(srv, "bot"))
    await until(lambda: any(c.bot == "bot" for c in srv.clients))
    fut = srv.request_game("comeback", "bot")
    start = await first.recv_type("game_start")
    yt = await first.recv_type("your_turn")
    first.writer.transport.abort()  # vanish mid-turn
    second = await Raw.connect(srv.port)
    await second.hello(token, "comeback")
    again = await second.recv_type("game_start")
    assert again == start
    yt2 = await second.recv_type("your_turn")
    assert yt2["observation"] == yt["observation"]
    second.send({"type": "resign", "game_id": start["game_id"]})
    over = await second.recv_type("game_over")
    assert over["reason"] == "resign" and over["winner"] == 2
    assert (await asyncio.wait_for(fut, WAIT)).reason == "resign"
    await stop_process(bot)
