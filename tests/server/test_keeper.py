"""The storage keeper without a socket or a database: a storage that is away on demand
(server/net/keeper.py). Results wait in memory and in the spill file while it is away, are
written when it is back (pairing resumes then), and an outage past the limit gives up."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from maag.server.net.keeper import StorageKeeper
from maag.server.net.model import GameRequest, GameSummary
from maag.server.storage.base import LeaseLost, StorageUnavailable
from maag.server.storage.spill import Spill


class FakeStorage:
    """What the keeper uses of an AsyncStorage; `down` makes every call fail."""

    def __init__(self) -> None:
        self.down = False
        self.finished: dict[int, dict[str, Any]] = {}
        self.beats = 0
        self.storage = self

    def _answer(self) -> None:
        if self.down:
            raise StorageUnavailable("away")

    async def register_server(self, *args: Any) -> None:
        self._answer()

    async def unregister_server(self, *args: Any) -> None:
        self._answer()

    async def heartbeat(self, server_id: str) -> int:
        self._answer()
        self.beats += 1
        return 1

    async def keep_connections(self, *args: Any) -> None:
        self._answer()

    async def add_connection(self, *args: Any) -> int:
        self._answer()
        return 0

    def claim_lapsed(self, server_id: str, game: str | None = None) -> list[Any]:
        return []

    async def run(self, fn: Any, *args: Any) -> Any:
        if self.down:
            raise StorageUnavailable("away")
        return fn(*args)

    async def finish_game(self, game_id: int, replay: dict[str, Any], fenced: bool = True) -> None:
        if self.down:
            raise StorageUnavailable("away")
        self.finished[game_id] = replay


def _keeper(st: FakeStorage, spill: Path | None, events: list[str], limit: float = 60.0) -> StorageKeeper:
    return StorageKeeper(st, "s1", lease_s=0.3, outage_limit_s=limit,  # type: ignore[arg-type]
                         spill_dir=str(spill) if spill else None,
                         on_back=lambda: events.append("back"), on_fail=lambda why: events.append("fail"))


def _summary(gid: int) -> GameSummary:
    return GameSummary(gid, ("a", "b"), 0, "rules", 10, (1.0, 1.0), (0.0, 0.0), False)


async def _until(cond: Any, timeout: float = 10.0) -> None:
    end = asyncio.get_running_loop().time() + timeout
    while not cond():
        assert asyncio.get_running_loop().time() < end, "hang guard"
        await asyncio.sleep(0.01)


async def test_results_wait_through_an_outage_and_are_written_when_it_ends(tmp_path: Path) -> None:
    st, events = FakeStorage(), list[str]()
    k = _keeper(st, tmp_path, events)
    await k.start("test")
    loop = asyncio.get_running_loop()
    req = GameRequest(("a", "b"), future=loop.create_future())
    st.down = True
    k.lost(StorageUnavailable("away"))
    k.keep(7, {"game": "x"}, req, _summary(7))
    assert not k.ok and k.waiting(7)
    assert (tmp_path / "s1.jsonl").exists()  # on disk as well
    task = loop.create_task(k.run())
    try:
        await asyncio.sleep(0.3)
        assert not k.ok and not req.future.done() and events == []  # retried, still away
        st.down = False
        await _until(lambda: k.ok)
        assert events == ["back"] and st.finished == {7: {"game": "x"}} and not k.pending
        summary = await asyncio.wait_for(req.future, 5)
        assert summary.stored and summary.game_id == 7
        assert not (tmp_path / "s1.jsonl").exists()
    finally:
        task.cancel()
    await k.stop()


async def test_a_new_keeper_adopts_what_a_stopped_one_left(tmp_path: Path) -> None:
    st, events = FakeStorage(), list[str]()
    k = _keeper(st, tmp_path, events)
    await k.start("first")
    st.down = True
    k.keep(3, {"game": "left"})
    await k.stop()  # the database is still away: the result stays in the spill directory
    assert Spill(tmp_path, "probe").adopt() == {3: {"game": "left"}}
    st.down = False
    k2 = StorageKeeper(st, "s2", lease_s=0.3, outage_limit_s=60, spill_dir=str(tmp_path),  # type: ignore[arg-type]
                       on_back=lambda: None, on_fail=lambda why: None)
    await k2.start("second")  # stored before any takeover: its bots were told this result
    assert st.finished == {3: {"game": "left"}} and not k2.pending
    await k2.stop()


async def test_an_outage_past_the_limit_gives_up() -> None:
    st, events = FakeStorage(), list[str]()
    k = _keeper(st, None, events, limit=0.2)
    await k.start("test")
    st.down = True
    k.lost(StorageUnavailable("away"))
    await asyncio.wait_for(k.run(), 10)  # returns once it gives up
    assert events == ["fail"] and not k.ok


async def test_the_lease_is_renewed_while_the_database_answers() -> None:
    st, events = FakeStorage(), list[str]()
    k = _keeper(st, None, events)
    await k.start("test")
    task = asyncio.get_running_loop().create_task(k.run())
    try:
        await _until(lambda: st.beats >= 2)
    finally:
        task.cancel()
    assert k.ok and events == []


async def test_with_peers_a_result_is_told_only_once_stored() -> None:
    """A referee with peers tells `game_over` of a result kept through an outage only once it
    is stored: a peer may take the game over meanwhile, and then it never is."""
    st, events = FakeStorage(), list[str]()
    k = _keeper(st, None, events)
    await k.start("test")
    told: dict[int, bool] = {}
    st.down = True
    for gid in (1, 2):
        k.keep(gid, {"game": gid})
        k.held[gid] = lambda ok, gid=gid: told.__setitem__(gid, ok)
    await k.flush()
    assert told == {}
    st.down = False
    taken = {2}
    real = st.finish_game

    async def finish(game_id: int, replay: dict[str, Any], fenced: bool = True) -> None:
        if game_id in taken:
            raise LeaseLost("taken over")
        await real(game_id, replay, fenced)

    st.finish_game = finish  # type: ignore[method-assign]
    await k.flush()
    assert told == {1: True} and 2 not in k.held and events == []
