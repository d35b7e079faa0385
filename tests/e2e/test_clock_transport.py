"""The clock forgives a seat its network time, not its thinking time.

The referee charges a seat the wall time from its prompt to its answer, less the exchange's
transport time as the kernel measured it (server/referee/clock.py). Linux delays the ACK of
the referee's prompt until the bot answers (or 40 ms pass), so the smoothed round trip
(`tcpi_rtt`) of a bot that thinks grows with its thinking, and forgiving it (up to the lag
allowance, 50 ms, each exchange) forgave the thinking: here, before the fix, one seat was
charged 198 ms of thinking and forgiven 211 ms as transport.
The measure is the minimum round trip the kernel saw (`tcpi_min_rtt`), which delayed ACKs
only ever raise. A real bot process that waits 25 ms before each answer, over loopback: its
charged thinking time is its waiting, and almost nothing is written off as transport."""

from __future__ import annotations

from pathlib import Path

from maag.server.referee.clock import TimeControl
from maag.server.storage.base import SQLiteStorage

from .conftest import MakeServer, spawn_minibot, stop_process, token_for, until


async def test_a_bots_thinking_is_charged_not_forgiven_as_transport(referee: MakeServer,
                                                                    tmp_path: Path) -> None:
    db = tmp_path / "clock.sqlite3"
    srv = await referee(db, auto_pair=True, game_config={"map": "a-tiny", "turn_limit": 6},
                        tc=TimeControl.parse("2s"))
    bots = [await spawn_minibot(srv.port, token_for(srv, name), "--delay", "25", "--seed", str(i))
            for i, name in enumerate(("slow-a", "slow-b"))]
    try:
        await until(lambda: srv.stats["games_finished"] >= 1, timeout=60)
    finally:
        for p in bots:
            await stop_process(p)
    st = SQLiteStorage(db)
    try:
        (game_id,) = [r[0] for r in st.db.query("SELECT game_id FROM results", ())][:1]
        replay = st.get_replay(int(game_id))
    finally:
        st.close()
    assert replay is not None
    clock = replay["clock"]
    for seat in (0, 1):
        think, transport = clock["think_ms"][seat], clock["transport_ms"][seat]
        # Every answer came 25 ms after its prompt: the seat thought, loopback carried it.
        assert think >= 100, clock
        assert transport <= 0.05 * think, (seat, clock)
