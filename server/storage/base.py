"""Storage of bots, games, results and replays: the `Storage` interface, its SQLite
implementation (one file, WAL, durable commits), and `AsyncStorage`, which runs any Storage
on one worker thread so the event loop never blocks on the disk.

The SQL is kept portable (`?` placeholders, which another backend may translate; `INSERT
... RETURNING`; JSON kept as TEXT; times as ISO-8601 UTC text); only the schema's DDL is
backend-specific. A game's row is written when it starts (status `running`); its result and
replay are written in one transaction with the status change to `finished`, and that
transaction is committed (synchronous=FULL) before the referee sends `game_over`.

Several referees may share one database. Each registers in `servers` with a lease that it
renews (`heartbeat`); a game row names the server playing it. Games left `running` by a
server whose lease has lapsed (it crashed, or lost the database for longer than its lease)
are marked `aborted` by any live server (`abort_lapsed`); a live server's games are never
touched. A result that arrives later for such a game is still stored (`finish_game`), and
writing the same result twice stores it once, so a referee may retry a write whose
acknowledgement was lost.

Tokens: `add_bot` makes a random token and stores only its SHA-256; a bot is found by the
hash of the token it presents.
"""

from __future__ import annotations

import abc
import asyncio
import concurrent.futures
import datetime as _dt
import hashlib
import json
import os
import secrets
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from maag.server.storage.sql import NOW_EPOCH, games_schema, sqlite_connect, sqlite_migrate, sqlite_tx

__all__ = ["Storage", "SQLiteStorage", "AsyncStorage", "BotRecord", "GameRecord", "StorageError",
           "StorageUnavailable", "default_db_path", "hash_token", "open_storage"]

T = TypeVar("T")


class StorageError(Exception):
    """A storage operation was refused (e.g. a bot name already taken)."""


class StorageUnavailable(StorageError):
    """The database cannot be reached now (connection lost, server restarting, file locked):
    the operation did not happen, or its outcome is unknown; retrying later is safe."""


@dataclass(frozen=True, slots=True)
class BotRecord:
    name: str
    created: str


@dataclass(frozen=True, slots=True)
class GameRecord:
    id: int
    game: str
    config: dict[str, Any]
    seats: tuple[str, str]
    time_control: str
    match_id: str | None
    status: str
    """running, finished or aborted."""
    created: str
    winner: int | None = None
    reason: str | None = None
    plies: int | None = None
    finished: str | None = None
    verdict: dict[str, Any] | None = None
    """For a forfeit: {"seat": 1 or 2, "kind": ..., "detail": ...} (docs/hosting.md, verdicts)."""


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def user_path(override: str, xdg: str, fallback: str, *parts: str) -> Path:
    """$`override` if set, else `parts` under maag's folder in an XDG base directory
    ($`xdg`, default ~/`fallback`)."""
    env = os.environ.get(override)
    if env:
        return Path(env)
    base = os.environ.get(xdg) or os.path.join(os.path.expanduser("~"), fallback)
    return Path(base, "maag", *parts)


def default_db_path() -> Path:
    """$MAAG_DB, else maag.sqlite3 in the user's data directory ($XDG_DATA_HOME/maag)."""
    return user_path("MAAG_DB", "XDG_DATA_HOME", ".local/share", "maag.sqlite3")


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


class Storage(abc.ABC):
    """What the referee and the command line need from a database. Every method is blocking
    and commits before it returns; use AsyncStorage from the event loop."""

    # -- bots
    @abc.abstractmethod
    def add_bot(self, name: str, *, replace: bool = False) -> str:
        """Register `name` and return a new token (shown once; only its hash is kept).
        StorageError if the name is taken, unless `replace` (which revokes the old token)."""

    @abc.abstractmethod
    def bot_by_token(self, token: str) -> str | None:
        """The name of the bot holding `token`, or None."""

    @abc.abstractmethod
    def valid_token_hashes(self, hashes: list[str]) -> set[str]:
        """Those of `hashes` that still belong to a bot (the others were revoked)."""

    @abc.abstractmethod
    def list_bots(self) -> list[BotRecord]: ...

    # -- games
    @abc.abstractmethod
    def create_game(self, game: str, config: dict[str, Any], seats: tuple[str, str], time_control: str,
                    match_id: str | None = None, server: str | None = None) -> int:
        """A new game row with status running, played by server `server` (see
        register_server); returns its id (also the replay's id)."""

    @abc.abstractmethod
    def finish_game(self, game_id: int, replay: dict[str, Any]) -> None:
        """Store the result and replay of a game and mark it finished (or aborted, for a
        result without winner and reason `aborted`), in one durable transaction. The game may
        be `running`, or `aborted` without a result (its server's lease lapsed); storing the
        same result again does nothing (a retry); another result for it is a StorageError."""

    @abc.abstractmethod
    def abort_lapsed(self) -> int:
        """Mark `running` the games whose server's lease has lapsed (or that name no
        server: left by an older maag) as aborted; returns how many."""

    @abc.abstractmethod
    def register_server(self, server: str, name: str, lease_s: float) -> None:
        """Record a referee `server` (a fresh id per process) and start its lease."""

    @abc.abstractmethod
    def heartbeat(self, server: str) -> None:
        """Renew the lease of `server`."""

    @abc.abstractmethod
    def unregister_server(self, server: str) -> None:
        """A server that stops cleanly ends its lease (its games are over by then)."""

    @abc.abstractmethod
    def ping(self) -> None:
        """Reach the database (StorageUnavailable if it cannot be reached)."""

    @abc.abstractmethod
    def get_game(self, game_id: int) -> GameRecord | None: ...

    @abc.abstractmethod
    def list_games(self, match_id: str | None = None, status: str | None = None,
                   limit: int = 1000) -> list[GameRecord]:
        """Games, newest first."""

    @abc.abstractmethod
    def get_replay(self, game_id: int) -> dict[str, Any] | None: ...

    @abc.abstractmethod
    def close(self) -> None: ...


_GAME_COLS = ("g.id, g.game, g.config, g.seat0, g.seat1, g.time_control, g.match_id, g.status, g.created, "
              "r.winner, r.reason, r.plies, r.finished, r.verdict")


class SQLStorage(Storage):
    """What the SQL backends share: one schema, and the same queries. A backend supplies its
    connection (`_db`, guarded by `_lock`), transactions (`_tx`), queries (`_query`), its
    parameter placeholder (`PARAM`) and the name of its dialect (`DIALECT`)."""

    PARAM = "?"
    DIALECT = "sqlite"
    _db: Any
    _lock: threading.Lock

    @abc.abstractmethod
    def _tx(self, fn: Callable[[Any], T]) -> T: ...

    @abc.abstractmethod
    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]: ...

    def _sql(self, text: str) -> str:
        """`text` with `?` placeholders and `NOW` (the database's clock) for this backend."""
        return text.replace("?", self.PARAM).replace("NOW", NOW_EPOCH[self.DIALECT])

    # -- bots
    def add_bot(self, name: str, *, replace: bool = False) -> str:
        if not name or len(name) > 64 or not name.isprintable() or name.strip() != name:
            raise StorageError("a bot name is 1..64 printable characters without surrounding spaces")
        token = "maag_" + secrets.token_urlsafe(24)

        def tx(cur: Any) -> None:
            cur.execute(self._sql("SELECT name FROM bots WHERE name = ?"), (name,))
            if cur.fetchone():
                if not replace:
                    raise StorageError(f"a bot named {name!r} exists (use --replace to issue a new token)")
                cur.execute(self._sql("UPDATE bots SET token_hash = ? WHERE name = ?"),
                            (hash_token(token), name))
            else:
                cur.execute(self._sql("INSERT INTO bots (name, token_hash, created) VALUES (?, ?, ?)"),
                            (name, hash_token(token), _now()))

        self._tx(tx)
        return token

    def bot_by_token(self, token: str) -> str | None:
        rows = self._query(self._sql("SELECT name FROM bots WHERE token_hash = ?"), (hash_token(token),))
        return str(rows[0][0]) if rows else None

    def valid_token_hashes(self, hashes: list[str]) -> set[str]:
        if not hashes:
            return set()
        marks = ", ".join(["?"] * len(hashes))
        rows = self._query(self._sql(f"SELECT token_hash FROM bots WHERE token_hash IN ({marks})"),
                           tuple(hashes))
        return {str(r[0]) for r in rows}

    def list_bots(self) -> list[BotRecord]:
        return [BotRecord(r[0], r[1]) for r in self._query("SELECT name, created FROM bots ORDER BY name")]

    # -- games
    def create_game(self, game: str, config: dict[str, Any], seats: tuple[str, str], time_control: str,
                    match_id: str | None = None, server: str | None = None) -> int:
        def tx(cur: Any) -> int:
            cur.execute(self._sql("INSERT INTO games (game, config, seat0, seat1, time_control, match_id, "
                                  "status, created, server) VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?) "
                                  "RETURNING id"),
                        (game, json.dumps(config), seats[0], seats[1], time_control, match_id, _now(),
                         server))
            row = cur.fetchone()
            assert row is not None
            return int(row[0])

        return self._tx(tx)

    def finish_game(self, game_id: int, replay: dict[str, Any]) -> None:
        res = replay["result"]
        status = "aborted" if res["reason"] == "aborted" else "finished"
        think = replay.get("clock", {}).get("think_ms", [None, None])

        def tx(cur: Any) -> None:
            cur.execute(self._sql("UPDATE games SET status = ? WHERE id = ? AND status IN "
                                  "('running', 'aborted') AND NOT EXISTS "
                                  "(SELECT 1 FROM results WHERE game_id = ?)"),
                        (status, game_id, game_id))
            if cur.rowcount != 1:
                cur.execute(self._sql("SELECT winner, reason, plies FROM results WHERE game_id = ?"),
                            (game_id,))
                row = cur.fetchone()
                if row is not None and tuple(row) == (res["winner"], res["reason"], res["plies"]):
                    return  # stored already: a retry after a lost acknowledgement
                raise StorageError(f"game {game_id} is not running" if row is None
                                   else f"game {game_id} has another result stored")
            verdict = res.get("verdict")
            cur.execute(self._sql("INSERT INTO results (game_id, winner, reason, plies, think_ms0, "
                                  "think_ms1, finished, verdict) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
                        (game_id, res["winner"], res["reason"], res["plies"], think[0], think[1], _now(),
                         None if verdict is None else json.dumps(verdict)))
            cur.execute(self._sql("INSERT INTO replays (game_id, seed, tags, data) VALUES (?, ?, ?, ?)"),
                        (game_id, str(replay["seed"]), json.dumps(replay.get("tags", {})),
                         json.dumps(replay, separators=(",", ":"))))

        self._tx(tx)

    # -- servers and leases
    def register_server(self, server: str, name: str, lease_s: float) -> None:
        def tx(cur: Any) -> None:
            cur.execute(self._sql("INSERT INTO servers (id, name, started, heartbeat, lease_s) "
                                  "VALUES (?, ?, ?, NOW, ?)"), (server, name, _now(), float(lease_s)))

        self._tx(tx)

    def heartbeat(self, server: str) -> None:
        def tx(cur: Any) -> None:
            cur.execute(self._sql("UPDATE servers SET heartbeat = NOW WHERE id = ?"), (server,))

        self._tx(tx)

    def unregister_server(self, server: str) -> None:
        def tx(cur: Any) -> None:
            cur.execute(self._sql("DELETE FROM servers WHERE id = ?"), (server,))

        self._tx(tx)

    def abort_lapsed(self) -> int:
        def tx(cur: Any) -> int:
            cur.execute(self._sql("UPDATE games SET status = 'aborted' WHERE status = 'running' AND "
                                  "(server IS NULL OR server NOT IN "
                                  "(SELECT id FROM servers WHERE heartbeat + lease_s >= NOW))"))
            n = int(cur.rowcount)
            # Servers gone for a day are forgotten (their games were aborted long ago).
            cur.execute(self._sql("DELETE FROM servers WHERE heartbeat + lease_s + 86400 < NOW"))
            return n

        return self._tx(tx)

    def ping(self) -> None:
        self._query("SELECT 1")

    def get_game(self, game_id: int) -> GameRecord | None:
        rows = self._query(self._sql(f"SELECT {_GAME_COLS} FROM games g LEFT JOIN results r "
                                     "ON r.game_id = g.id WHERE g.id = ?"), (game_id,))
        return _game_record(rows[0]) if rows else None

    def list_games(self, match_id: str | None = None, status: str | None = None,
                   limit: int = 1000) -> list[GameRecord]:
        where, args = [], []
        if match_id is not None:
            where.append("g.match_id = ?")
            args.append(match_id)
        if status is not None:
            where.append("g.status = ?")
            args.append(status)
        sql = f"SELECT {_GAME_COLS} FROM games g LEFT JOIN results r ON r.game_id = g.id"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY g.id DESC LIMIT ?"
        return [_game_record(r) for r in self._query(self._sql(sql), (*args, int(limit)))]

    def get_replay(self, game_id: int) -> dict[str, Any] | None:
        rows = self._query(self._sql("SELECT data FROM replays WHERE game_id = ?"), (game_id,))
        return json.loads(rows[0][0]) if rows else None

    def close(self) -> None:
        with self._lock:
            self._db.close()


class SQLiteStorage(SQLStorage):
    """Storage in one SQLite file (WAL mode, synchronous=FULL)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite_connect(path)
        self._lock = threading.Lock()
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.executescript(games_schema("sqlite"))
        sqlite_migrate(self._db)

    def _tx(self, fn: Callable[[sqlite3.Cursor], T]) -> T:
        try:
            return sqlite_tx(self._db, self._lock, fn)
        except sqlite3.OperationalError as e:  # locked past the timeout, disk full, I/O error
            raise StorageUnavailable(f"SQLite: {e}") from e

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        try:
            with self._lock:
                return self._db.execute(sql, args).fetchall()
        except sqlite3.OperationalError as e:
            raise StorageUnavailable(f"SQLite: {e}") from e


def _game_record(r: tuple[Any, ...]) -> GameRecord:
    return GameRecord(id=int(r[0]), game=r[1], config=json.loads(r[2]), seats=(r[3], r[4]), time_control=r[5],
                      match_id=r[6], status=r[7], created=r[8], winner=r[9], reason=r[10], plies=r[11],
                      finished=r[12], verdict=None if r[13] is None else json.loads(r[13]))


def open_storage(url: str | os.PathLike[str] | None = None) -> Storage:
    """A Storage for a path (SQLite) or None (the default path). Other backends plug in here
    by URL scheme (e.g. postgresql://)."""
    if url is None:
        return SQLiteStorage(default_db_path())
    text = str(url)
    if text.startswith("sqlite:///"):
        return SQLiteStorage(text[len("sqlite:///"):])
    if text.startswith(("postgresql://", "postgres://")):
        from maag.server.storage.postgres import PostgresStorage

        return PostgresStorage(text)
    if "://" in text:
        raise StorageError(f"unsupported storage URL {text!r} (use a file path, sqlite:///PATH or postgresql://...)")
    return SQLiteStorage(text)


class AsyncStorage:
    """Runs a Storage's blocking calls on one dedicated thread; awaitable from the loop."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="maag-storage")

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, lambda: fn(*args, **kwargs))

    async def bot_by_token(self, token: str) -> str | None:
        return await self.run(self.storage.bot_by_token, token)

    async def valid_token_hashes(self, hashes: list[str]) -> set[str]:
        return await self.run(self.storage.valid_token_hashes, hashes)

    async def create_game(self, game: str, config: dict[str, Any], seats: tuple[str, str], time_control: str,
                          match_id: str | None = None, server: str | None = None) -> int:
        return await self.run(self.storage.create_game, game, config, seats, time_control, match_id, server)

    async def finish_game(self, game_id: int, replay: dict[str, Any]) -> None:
        await self.run(self.storage.finish_game, game_id, replay)

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self.storage.close()
