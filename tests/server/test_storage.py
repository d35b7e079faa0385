"""SQLite storage: tokens stored only as hashes, games, results and replays, crash leftovers."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from maag.server.storage.base import AsyncStorage, SQLiteStorage, StorageError, hash_token


def _replay(winner: int | None = 0, reason: str = "resign") -> dict:
    return {"seed": 2**63 - 5, "tags": {"Seat1": "a"}, "actions": [], "result":
            {"winner": winner, "reason": reason, "plies": 0}, "clock": {"think_ms": [1.5, 2.5]}}


def test_tokens_are_stored_only_as_hashes(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite3"
    st = SQLiteStorage(db)
    token = st.add_bot("alice")
    assert st.bot_by_token(token) == "alice"
    assert st.bot_by_token(token + "x") is None
    with pytest.raises(StorageError):
        st.add_bot("alice")
    new = st.add_bot("alice", replace=True)
    assert st.bot_by_token(token) is None and st.bot_by_token(new) == "alice"
    with pytest.raises(StorageError):
        st.add_bot(" spaced ")
    st.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert new.encode() not in raw and hash_token(new).encode() in raw


def test_games_results_replays_and_reopen(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite3"
    st = SQLiteStorage(db)
    g1 = st.create_game("heroes", {"map": "a"}, ("a", "b"), "1s", match_id="m1")
    g2 = st.create_game("heroes", {"map": "a"}, ("b", "a"), "1s", match_id="m1")
    g3 = st.create_game("heroes", {"map": "a"}, ("b", "a"), "1s")
    st.finish_game(g1, _replay())
    st.finish_game(g1, _replay())  # a retry (its acknowledgement lost) stores it once
    with pytest.raises(StorageError):
        st.finish_game(g1, _replay(None, "aborted"))  # another result for it: refused
    st.finish_game(g3, _replay(None, "aborted"))
    # A crash here: reopen without closing.
    st2 = SQLiteStorage(db)
    assert [g.id for g in st2.list_games(match_id="m1")] == [g2, g1]
    rec = st2.get_game(g1)
    assert rec is not None and rec.status == "finished" and rec.winner == 0 and rec.reason == "resign"
    assert st2.get_replay(g1) == _replay()
    assert st2.get_game(g3).status == "aborted"  # type: ignore[union-attr]
    assert st2.abort_lapsed() == 1
    assert st2.get_game(g2).status == "aborted" and st2.get_replay(g2) is None  # type: ignore[union-attr]
    assert st2.get_game(999) is None
    mode = sqlite3.connect(db).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    st.close()
    st2.close()


def test_async_storage(tmp_path: Path) -> None:
    async def main() -> None:
        st = AsyncStorage(SQLiteStorage(tmp_path / "a.sqlite3"))
        token = await st.run(st.storage.add_bot, "zed")
        assert await st.bot_by_token(token) == "zed"
        gid = await st.create_game("heroes", {}, ("zed", "zed"), "inf")
        await st.finish_game(gid, _replay(-1, "turn_limit"))
        assert st.storage.get_game(gid).winner == -1  # type: ignore[union-attr]
        st.close()

    asyncio.run(main())
