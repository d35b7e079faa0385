"""The fleet's storage on each backend (fleet/store.py, base.py's fenced writes): a lapsed
referee's games are claimed once, whole, with their action log; its lease is revoked, after
which nothing it writes is accepted; the log has no gap and no overlap; and a lone referee
whose lease lapsed but was not revoked (a database outage) keeps it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from maag.server.fleet.store import Batch, claim_lapsed, log_actions
from maag.server.storage.base import LeaseLost, Storage, open_storage


@pytest.fixture
def st(db_url: str) -> Iterator[Storage]:
    s = open_storage(db_url)
    yield s
    s.close()


def entry(i: int) -> dict[str, Any]:
    return {"seat": i % 2, "action": {"type": "end_turn"}, "t_ms": float(i)}


def replay(plies: int) -> dict[str, Any]:
    return {"seed": 1, "actions": [entry(i) for i in range(plies)],
            "result": {"winner": 0, "reason": "rules", "plies": plies}}


RESUME = {"game": "heroes", "seed": 1}


def test_a_takeover_revokes_the_lapsed_lease_and_fences_its_writes(st: Storage) -> None:
    st.register_server("paused", "a referee that stopped answering", 0.0)  # lapsed at once
    st.register_server("live", "a live referee", 3600.0)
    g = st.create_game("heroes", {}, ("a", "b"), "1s", server="paused")
    unlogged = st.create_game("heroes", {}, ("a", "c"), "1s", server="paused")
    assert log_actions(st, "paused", [Batch(g, 0, [entry(0), entry(1)], RESUME)]) == []
    st.heartbeat("paused")  # lapsed, not revoked: still its own (a lone referee's outage)
    time.sleep(0.05)  # (SQLite's clock counts milliseconds)
    claimed = claim_lapsed(st, "live")
    assert {c.game_id for c in claimed} == {g, unlogged}
    mine = next(c for c in claimed if c.game_id == g)
    assert (mine.seats, mine.epoch, mine.resume) == (("a", "b"), 1, RESUME)
    assert mine.actions == [entry(0), entry(1)]
    assert next(c for c in claimed if c.game_id == unlogged).resume is None
    assert claim_lapsed(st, "live") == []  # once

    # The paused referee wakes: nothing it writes is accepted.
    with pytest.raises(LeaseLost):
        st.heartbeat("paused")
    assert log_actions(st, "paused", [Batch(g, 2, [entry(2)])]) == [g]
    with pytest.raises(LeaseLost):
        st.finish_game(g, replay(3), server="paused")
    with pytest.raises(LeaseLost):
        st.create_game("heroes", {}, ("a", "b"), "1s", server="paused")
    with pytest.raises(LeaseLost):
        claim_lapsed(st, "paused")

    # The new host's log goes on where it ends, never over it.
    assert log_actions(st, "live", [Batch(g, 2, [entry(2)])]) == []
    assert log_actions(st, "live", [Batch(g, 2, [entry(2)])]) == [g]
    assert log_actions(st, "live", [Batch(g, 4, [entry(4)])]) == [g]
    st.finish_game(g, replay(3), server="live")
    assert st.db.query("SELECT server FROM results WHERE game_id = ?", (g,)) == [("live",)]
    assert st.db.query("SELECT COUNT(*) FROM game_actions WHERE game_id = ?", (g,)) == [(0,)]
    assert log_actions(st, "live", [Batch(g, 3, [entry(3)])]) == [g]  # over: nothing more
    st.finish_game(g, replay(3), server="live")  # a retry of the same result: stored once
    with pytest.raises(LeaseLost):
        st.finish_game(unlogged, replay(0), server="paused")


def test_a_live_referees_games_are_not_claimed(st: Storage) -> None:
    st.register_server("a", "live", 3600.0)
    st.register_server("b", "live", 3600.0)
    g = st.create_game("heroes", {}, ("a", "b"), "1s", server="a")
    assert claim_lapsed(st, "b") == []
    assert log_actions(st, "b", [Batch(g, 0, [entry(0)], RESUME)]) == [g]  # not its game
    assert log_actions(st, "a", [Batch(g, 0, [entry(0)], RESUME)]) == []
    st.finish_game(g, replay(1), server="a")
    assert st.get_game(g).status == "finished"  # type: ignore[union-attr]


def test_a_lapsed_referee_of_another_game_is_left_to_its_own(st: Storage) -> None:
    st.register_server("cards-dead", "a card game's referee", 0.02)  # lapsed, not ten times
    st.register_server("heroes", "live", 3600.0)
    st.register_server("cards", "live", 3600.0)
    g = st.create_game("cards", {}, ("a", "b"), "1s", server="cards-dead")
    time.sleep(0.05)
    assert claim_lapsed(st, "heroes", "heroes") == []
    assert st.get_game(g).status == "running"  # type: ignore[union-attr]
    assert [c.game_id for c in claim_lapsed(st, "cards", "cards")] == [g]
