"""Limits against a misbehaving party, each configurable (ServerConfig; `maag serve` and
`maag ladder` options), over real sockets:
- connections before `hello` from one address (500 idle ones used to cost 94 MB);
- failed logins answered after a delay that grows with each failure from the address;
- games per bot per minute (two tokens resigning in a loop made 730 games a second).
"""

from __future__ import annotations

import asyncio
import time

from .conftest import MakeServer, Raw, token_for, until


async def test_connections_before_hello_are_capped_per_address(referee: MakeServer) -> None:
    srv = await referee(max_pending_per_address=3)
    idle = [await Raw.connect(srv.port) for _ in range(3)]
    await until(lambda: len(srv.clients) == 3)
    extra = await Raw.connect(srv.port)
    try:
        got = await extra.closed()
    except ConnectionResetError:  # closed before our greeting was read: a reset
        got = []
    assert got == []  # closed at once, before any greeting
    assert len(srv.clients) == 3
    await idle[0].hello(token_for(srv, "now-a-bot"), "now-a-bot")  # one of them logs in
    again = await Raw.connect(srv.port)
    await again.hello(token_for(srv, "another"), "another")  # a place was freed


async def test_failed_logins_are_answered_ever_more_slowly(referee: MakeServer) -> None:
    srv = await referee(auth_delay_ms=100.0, auth_delay_max_ms=400.0)
    waits = []
    for _ in range(4):
        raw = await Raw.connect(srv.port)
        t0 = time.monotonic()
        raw.send({"type": "hello", "name": "guess", "token": "wrong", "games": ["heroes"]})
        got = await raw.closed()
        waits.append(time.monotonic() - t0)
        assert [m["code"] for m in got if m["type"] == "error"] == ["auth_failed"]
    # At least 100, 200, 400, 400 ms (the cap): the delay doubles per failure.
    for w, least in zip(waits, (0.1, 0.2, 0.4, 0.4), strict=True):
        assert w >= least, waits
    good = await Raw.connect(srv.port)  # a right token from the same address is not delayed further
    await good.hello(token_for(srv, "right"), "right")


async def test_games_per_bot_per_minute(referee: MakeServer) -> None:
    srv = await referee(max_games_per_minute=3, auto_pair=True, game_config={"map": "a-tiny"})
    a, b = await Raw.connect(srv.port), await Raw.connect(srv.port)
    await a.hello(token_for(srv, "farm-a"), "farm-a")
    await b.hello(token_for(srv, "farm-b"), "farm-b")

    async def resign_every_game(raw: Raw) -> None:
        while True:
            m = await raw.recv(timeout=60)
            if m is None:
                return
            if m["type"] == "game_start":
                raw.send({"type": "resign", "game_id": m["game_id"]})

    tasks = [asyncio.ensure_future(resign_every_game(r)) for r in (a, b)]
    try:
        await until(lambda: srv.stats["games_finished"] >= 3)
        await asyncio.sleep(1.5)  # a farm would have played hundreds more by now
        assert srv.stats["games_started"] == 3
    finally:
        for t in tasks:
            t.cancel()
