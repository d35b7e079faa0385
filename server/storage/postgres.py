"""PostgreSQL implementation of `maag.server.storage.base.Storage`, for hosted competitions
(`--db postgresql://USER:PASSWORD@HOST:PORT/DB`).

Same tables and semantics as the SQLite storage: a game row is written `running` when the
game starts; its result and replay are written with the status change in one transaction,
committed before the call returns (PostgreSQL's default `synchronous_commit=on` makes the
commit durable), so the referee sends `game_over` only for stored games. One connection per
object, used under a lock; open one object per process. The schema is created on first use
under an advisory lock, so several processes may open a fresh database at once.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg
from maag.server.storage.base import SQLStorage, StorageError, _now, hash_token
from maag.server.storage.sql import games_schema, postgres_tx

__all__ = ["PostgresStorage", "SCHEMA_LOCK"]

T = TypeVar("T")

SCHEMA_LOCK = 0x6D616167  # pg_advisory_xact_lock key held while creating the schema ("maag")

def connect(url: str) -> psycopg.Connection[Any]:
    """An autocommit connection (transactions are explicit), or StorageError."""
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=30)
    except psycopg.Error as e:
        raise StorageError(f"cannot connect to PostgreSQL: {e}") from e


def ensure_schema(conn: psycopg.Connection[Any], ddl: str, lock: int = SCHEMA_LOCK) -> None:
    """Run `ddl` (idempotent statements) in one transaction under an advisory lock."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
        for stmt in ddl.split(";"):
            if stmt.strip():
                conn.execute(stmt)  # type: ignore[call-overload]


class PostgresStorage(SQLStorage):
    """Storage in a PostgreSQL database given by URL."""

    PARAM = "%s"

    def __init__(self, url: str) -> None:
        self.url = url
        self._db = connect(url)
        self._lock = threading.Lock()
        ensure_schema(self._db, games_schema("postgresql"))

    def _tx(self, fn: Callable[[psycopg.Cursor[Any]], T]) -> T:
        return postgres_tx(self._db, self._lock, fn)

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock, self._db.cursor() as cur:
            cur.execute(sql, args)  # type: ignore[call-overload]
            return cur.fetchall()

    # -- bots
    def add_bot(self, name: str, *, replace: bool = False) -> str:
        if not name or len(name) > 64 or not name.isprintable() or name.strip() != name:
            raise StorageError("a bot name is 1..64 printable characters without surrounding spaces")
        token = "maag_" + secrets.token_urlsafe(24)

        def tx(cur: psycopg.Cursor[Any]) -> None:
            cur.execute("INSERT INTO bots (name, token_hash, created) VALUES (%s, %s, %s) "
                        "ON CONFLICT (name) DO NOTHING", (name, hash_token(token), _now()))
            if cur.rowcount == 1:
                return
            if not replace:
                raise StorageError(f"a bot named {name!r} exists (use --replace to issue a new token)")
            cur.execute("UPDATE bots SET token_hash = %s WHERE name = %s", (hash_token(token), name))

        self._tx(tx)
        return token

    # -- games
    def create_game(self, game: str, config: dict[str, Any], seats: tuple[str, str], time_control: str,
                    match_id: str | None = None) -> int:
        def tx(cur: psycopg.Cursor[Any]) -> int:
            cur.execute("INSERT INTO games (game, config, seat0, seat1, time_control, match_id, status, "
                        "created) VALUES (%s, %s, %s, %s, %s, %s, 'running', %s) RETURNING id",
                        (game, json.dumps(config), seats[0], seats[1], time_control, match_id, _now()))
            row = cur.fetchone()
            assert row is not None
            return int(row[0])

        return self._tx(tx)

    def finish_game(self, game_id: int, replay: dict[str, Any]) -> None:
        res = replay["result"]
        status = "aborted" if res["reason"] == "aborted" else "finished"
        think = replay.get("clock", {}).get("think_ms", [None, None])

        def tx(cur: psycopg.Cursor[Any]) -> None:
            cur.execute("UPDATE games SET status = %s WHERE id = %s AND status = 'running'",
                        (status, game_id))
            if cur.rowcount != 1:
                raise StorageError(f"game {game_id} is not running")
            cur.execute("INSERT INTO results (game_id, winner, reason, plies, think_ms0, think_ms1, "
                        "finished) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                        (game_id, res["winner"], res["reason"], res["plies"], think[0], think[1], _now()))
            cur.execute("INSERT INTO replays (game_id, seed, tags, data) VALUES (%s, %s, %s, %s)",
                        (game_id, str(replay["seed"]), json.dumps(replay.get("tags", {})),
                         json.dumps(replay, separators=(",", ":"))))

        self._tx(tx)
