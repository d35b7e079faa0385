"""A referee with its database to itself (`ServerConfig(fleet=False)`: fleet/fleets.py's
SoloFleet) runs the same server code as a fleet's referee, without the fleet: real bot
processes play real games and their results are stored, but no action log is written, no link
listener published, no failed login counted in the database; the login delay, the games per
minute and the closing of revoked tokens hold as on one referee of a fleet. The same games on
a fleet's referee (the default) show the difference."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from maag.server.fleet.fleets import DatabaseFleet, SoloFleet, build_fleet
from maag.server.fleet.interface import FleetParts
from maag.server.net.server import RefereeServer, ServerConfig
from maag.server.storage.base import SQLiteStorage

from .conftest import MakeServer, Raw, spawn_minibot, stop_process, until
from .test_hostile import fatal


def stored(db: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    st = SQLiteStorage(db)
    try:
        return [tuple(r) for r in st.db.query(sql, params)]
    finally:
        st.close()


def add_bot(db: Path, name: str, *, replace: bool = False) -> str:
    st = SQLiteStorage(db)
    try:
        return st.add_bot(name, replace=replace)
    finally:
        st.close()


@pytest.mark.parametrize("fleet", [False, True])
async def test_bot_processes_play_on_a_referee_with_or_without_a_fleet(
        referee: MakeServer, tmp_path: Path, fleet: bool) -> None:
    db = tmp_path / "alone.sqlite3"
    tokens = [add_bot(db, "ann"), add_bot(db, "bob")]
    srv = await referee(db, fleet=fleet, auto_pair=True, game_config={"map": "a-tiny"})
    assert isinstance(srv.fleet, DatabaseFleet if fleet else SoloFleet)
    bots = [await spawn_minibot(srv.port, t, "--delay", "5", "--seed", str(i)) for i, t in enumerate(tokens)]
    try:
        await until(lambda: srv.stats["games_finished"] >= 2, timeout=60)
    finally:
        for p in bots:
            await stop_process(p)
    results = stored(db, "SELECT g.status, r.winner, g.resume IS NOT NULL FROM games g JOIN results r "
                         "ON r.game_id = g.id")
    # (A game paired as the bots were stopped is stored aborted: that is the referee's due.)
    assert {r[0] for r in results} <= {"finished", "aborted"}, results
    finished = [r for r in results if r[0] == "finished"]
    assert len(finished) >= 2, results
    # A fleet's referee logs every game's actions for a takeover and publishes its link
    # listener; one alone does neither.
    assert {r[2] for r in finished} == {fleet}
    assert (srv.fleet.link_address is not None) == fleet
    assert stored(db, "SELECT link FROM servers WHERE id = ?", srv.server_id) == [(srv.fleet.link_address,)]


async def test_limits_of_a_referee_alone(referee: MakeServer, tmp_path: Path) -> None:
    db = tmp_path / "alone.sqlite3"
    srv = await referee(db, fleet=False, auth_delay_ms=50.0, auth_delay_max_ms=400.0, max_games_per_minute=2,
                        auto_pair=True, game_config={"map": "a-tiny"}, token_check_s=0.2)
    waits = []
    for _ in range(3):  # failed logins: 50, 100, 200 ms, counted in this process only
        raw = await Raw.connect(srv.port)
        t0 = time.monotonic()
        raw.send({"type": "hello", "name": "guess", "token": "maag_wrong", "games": ["heroes"]})
        await fatal(raw, "auth_failed")
        waits.append(time.monotonic() - t0)
    for w, least in zip(waits, (0.05, 0.1, 0.2), strict=True):
        assert w >= least, waits
    assert await srv.fleet.auth_delay(["address 127.0.0.1"]) == 0.4  # a fourth: 400 ms (the cap)
    assert stored(db, "SELECT key FROM auth_failures") == []

    a, b = await Raw.connect(srv.port), await Raw.connect(srv.port)
    token_a = add_bot(db, "res-a")
    await a.hello(token_a, "res-a")
    await b.hello(add_bot(db, "res-b"), "res-b")

    async def resign_every_game(raw: Raw) -> None:
        while True:
            m = await raw.recv(timeout=60)
            if m is None:
                return
            if m["type"] == "game_start":
                raw.send({"type": "resign", "game_id": m["game_id"]})

    tasks = [asyncio.ensure_future(resign_every_game(r)) for r in (a, b)]
    try:
        await until(lambda: srv.stats["games_finished"] >= 2)
        await asyncio.sleep(1.0)
        assert srv.stats["games_started"] == 2  # games per minute: no third
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    # A token replaced by another process on the database closes its connection.
    add_bot(db, "res-a", replace=True)
    assert [m["code"] for m in await a.closed() if m["type"] == "error"] == ["auth_failed"]


async def test_no_fleet_ladder_without_a_fleet(tmp_path: Path) -> None:
    srv = RefereeServer(ServerConfig(port=0), SQLiteStorage(tmp_path / "x.sqlite3"))
    parts = FleetParts(config=ServerConfig(fleet=False, fleet_ladder="main"), server_id="x",
                       storage=srv.storage, keeper=srv.keeper, lobby=srv.lobby, seating=srv.seating,
                       rooms=srv.rooms,
                       watchers=srv.watchers, stats=srv.stats, spawn=srv.spawn, violation=srv.violation,
                       drop=lambda c: None, fail=lambda why: None, stopping=lambda: False, tasks=lambda: (),
                       request_game=srv.request_game)
    with pytest.raises(ValueError, match="fleet ladder"):
        build_fleet(parts)
    srv.storage.close()
