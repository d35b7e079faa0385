"""The games store: bots and their tokens, games, results, replays and the referees' leases
(`Storage`, written once over any backend's `Database`), and `AsyncStorage`, which runs a
Storage on one worker thread so the event loop never blocks on the disk. `open_storage(url)`
opens it on the backend the URL names (backend.py's dispatcher).

The SQL is written once, portable (`?` placeholders and `NOW`, translated by the backend;
`INSERT ... RETURNING`; JSON kept as TEXT; times as ISO-8601 UTC text); only the column types
of the DDL are the backend's. A game's row is written when it starts (status `running`); its
result and replay are written in one transaction with the status change to `finished`, and
that transaction is committed durably before the referee sends `game_over`.

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

import asyncio
import datetime as _dt
import hashlib
import json
import os
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, TypeVar

from maag.server.storage.backend import (
    Database,
    DbTarget,
    LeaseLost,
    StorageError,
    StorageUnavailable,
    UnsupportedURL,
    lock_digest,
    open_database,
    resolve_db,
    user_path,
)
from maag.server.storage.schema import MIGRATIONS, SCHEMA
from maag.server.storage.worker import StorageThread

__all__ = ["Storage", "SQLiteStorage", "AsyncStorage", "BotRecord", "GameRecord", "StorageError", "LeaseLost",
           "StorageUnavailable", "UnsupportedURL", "DbTarget", "resolve_db", "hash_token", "open_storage",
           "replay_json", "user_path"]

T = TypeVar("T")
P = ParamSpec("P")

# A write fenced by server ?'s lease: the lease is held until another server revokes it
# (fleet/store.py's `claim_lapsed`, once it has lapsed); a revoked lease never comes back.
HELD = "? IN (SELECT id FROM servers WHERE revoked = 0)"
NOT_REVOKED = "? NOT IN (SELECT id FROM servers WHERE revoked = 1)"  # (a referee never registered too)


def session_gone(dialect: str, s: str = "s") -> str:
    """SQL, true when the referee of `servers` row `s` is gone though its lease has not
    lapsed: on PostgreSQL, its database session (`servers.session`, the `application_name`
    of a connection it keeps open: fleet/takeover.py) has ended, a process killed or its
    machine's kernel closing its sockets, while the database has been up for longer than
    the lease (a restarted database ended every session: the leases decide then). Never
    elsewhere (SQLite: the leases decide)."""
    if dialect != "postgresql":
        return "(1 = 0)"
    return (f"({s}.session IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_stat_activity act "
            f"WHERE act.application_name = {s}.session) AND pg_postmaster_start_time() < "
            f"clock_timestamp() - make_interval(secs => {s}.lease_s))")


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
    """running, finished, aborted or voided (a finished game the host voided: storage/rulings.py)."""
    created: str
    winner: int | None = None
    reason: str | None = None
    plies: int | None = None
    finished: str | None = None
    verdict: dict[str, Any] | None = None
    """For a forfeit: {"seat": 1 or 2, "kind": ..., "detail": ...} (docs/hosting.md, verdicts)."""


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()



def replay_json(replay: dict[str, Any], actions_json: str | None = None) -> str:
    """`replay` as stored: `json.dumps(replay, separators=(",", ":"))`, with the text
    `actions_json` standing for its "actions" (the game's log, encoded once as it was played:
    a game of 600 actions took the storage thread a millisecond to encode again)."""
    if actions_json is None or "actions" not in replay:
        return json.dumps(replay, separators=(",", ":"))
    keys = list(replay)
    i = keys.index("actions")
    head = json.dumps({k: replay[k] for k in keys[:i]}, separators=(",", ":"))[:-1]  # "{...", no "}"
    tail = json.dumps({k: replay[k] for k in keys[i + 1:]}, separators=(",", ":"))[1:]  # "...}", no "{"
    return f'{head}{"," if i else ""}"actions":{actions_json}{"," if i + 1 < len(keys) else ""}{tail}'


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


_GAME_COLS = ("g.id, g.game, g.config, g.seat0, g.seat1, g.time_control, g.match_id, g.status, g.created, "
              "r.winner, r.reason, r.plies, r.finished, r.verdict")


class Storage:
    """What the referee and the command line need from a database, on any backend. Every
    method is blocking and commits before it returns; use AsyncStorage from the event loop."""

    def __init__(self, db: Database) -> None:
        self.db = db
        db.ensure(SCHEMA, MIGRATIONS)

    @property
    def url(self) -> str:
        """The `--db` value that opens this database again, from any process (backend.py's
        DbTarget.url)."""
        return self.db.url

    # -- bots
    def add_bot(self, name: str, *, replace: bool = False) -> str:
        if not name or len(name) > 64 or not name.isprintable() or name.strip() != name:
            raise StorageError("a bot name is 1..64 printable characters without surrounding spaces")
        token = "maag_" + secrets.token_urlsafe(24)

        def tx(cur: Any) -> None:
            self.db.execute(cur, "SELECT name FROM bots WHERE name = ?", (name,))
            if cur.fetchone():
                if not replace:
                    raise StorageError(f"a bot named {name!r} exists (use --replace to issue a new token)")
                self.db.execute(cur, "UPDATE bots SET token_hash = ? WHERE name = ?",
                                (hash_token(token), name))
            else:
                self.db.execute(cur, "INSERT INTO bots (name, token_hash, created) VALUES (?, ?, ?)",
                                (name, hash_token(token), _now()))

        self.db.tx(tx)
        return token

    def bot_by_token(self, token: str) -> str | None:
        rows = self.db.query("SELECT name FROM bots WHERE token_hash = ?", (hash_token(token),))
        return str(rows[0][0]) if rows else None

    def valid_token_hashes(self, hashes: list[str]) -> set[str]:
        if not hashes:
            return set()
        marks = ", ".join(["?"] * len(hashes))
        rows = self.db.query(f"SELECT token_hash FROM bots WHERE token_hash IN ({marks})", hashes)
        return {str(r[0]) for r in rows}

    def list_bots(self) -> list[BotRecord]:
        return [BotRecord(r[0], r[1]) for r in self.db.query("SELECT name, created FROM bots ORDER BY name")]

    # -- games
    def create_game(self, game: str, config: dict[str, Any], seats: tuple[str, str], time_control: str,
                    match_id: str | None = None, server: str | None = None,
                    link_secret: str | None = None) -> int:
        """The new game's id; with `server`, unless that server's lease was revoked (LeaseLost).
        `link_secret`: what the fleet's other referees log in with to carry a seat of this game
        to its host (fleet/links.py)."""
        def tx(cur: Any) -> int:
            self.db.execute(cur, "INSERT INTO games (game, config, seat0, seat1, time_control, match_id, "
                            "status, created, server, link_secret) "
                            "SELECT ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?"
                            + ("" if server is None else f" WHERE {NOT_REVOKED}")
                            + " RETURNING id",
                            (game, json.dumps(config), seats[0], seats[1], time_control, match_id, _now(),
                             server, link_secret, *(() if server is None else (server,))))
            row = cur.fetchone()
            if row is None:
                raise LeaseLost(f"server {server}'s lease was revoked")
            if server is not None:  # counted by every referee's games-per-minute limit
                for bot in set(seats):
                    self.db.execute(cur, "INSERT INTO game_starts (bot, server, at) VALUES (?, ?, NOW)",
                                    (bot, server))
            return int(row[0])

        return self.db.tx(tx)

    def finish_game(self, game_id: int, replay: dict[str, Any], server: str | None = None,
                    actions_json: str | None = None) -> None:
        """Store a game's result and replay (and forget its action log). With `server`, the
        write is fenced: only the server hosting the game, while its lease is held, may store
        it (else LeaseLost). Without, any running or aborted game takes it (a result adopted
        from a spill file). The same result twice is stored once (a retry). `actions_json`:
        the replay's actions as JSON already (GameSession.log_json; see `replay_json`)."""
        res = replay["result"]
        status = "aborted" if res["reason"] == "aborted" else "finished"
        think = replay.get("clock", {}).get("think_ms", [None, None])
        fence = (f" AND status = 'running' AND server = ? AND {HELD}" if server is not None
                 else " AND status IN ('running', 'aborted')")

        def tx(cur: Any) -> None:
            self.db.execute(cur, f"UPDATE games SET status = ? WHERE id = ?{fence} AND NOT EXISTS "
                            "(SELECT 1 FROM results WHERE game_id = ?)",
                            (status, game_id, *((server, server) if server is not None else ()), game_id))
            if cur.rowcount != 1:
                self.db.execute(cur, "SELECT winner, reason, plies FROM results WHERE game_id = ?",
                                (game_id,))
                row = cur.fetchone()
                if row is not None and tuple(row) == (res["winner"], res["reason"], res["plies"]):
                    return  # stored already: a retry after a lost acknowledgement
                if row is None and server is not None:
                    raise LeaseLost(f"game {game_id} is no longer hosted by server {server} (its lease "
                                    "was revoked, or another server took the game over)")
                raise StorageError(f"game {game_id} is not running" if row is None
                                   else f"game {game_id} has another result stored")
            verdict = res.get("verdict")
            self.db.execute(cur, "INSERT INTO results (game_id, winner, reason, plies, think_ms0, "
                            "think_ms1, finished, verdict, server) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            (game_id, res["winner"], res["reason"], res["plies"], think[0], think[1], _now(),
                             None if verdict is None else json.dumps(verdict), server))
            self.db.execute(cur, "INSERT INTO replays (game_id, seed, tags, data) VALUES (?, ?, ?, ?)",
                            (game_id, str(replay["seed"]), json.dumps(replay.get("tags", {})),
                             replay_json(replay, actions_json)))
            self.db.execute(cur, "DELETE FROM game_actions WHERE game_id = ?", (game_id,))

        self.db.tx(tx)

    # -- servers and leases
    def register_server(self, server: str, name: str, lease_s: float) -> None:
        def tx(cur: Any) -> None:
            self.db.execute(cur, "INSERT INTO servers (id, name, started, heartbeat, lease_s) "
                            "VALUES (?, ?, ?, NOW, ?)", (server, name, _now(), float(lease_s)))

        self.db.tx(tx)

    def heartbeat(self, server: str) -> int:
        """Renew `server`'s lease; LeaseLost once another server has revoked it (even a lapsed
        lease is renewed while nobody has: a lone referee rides out a database outage).
        Returns how many servers hold a live lease, this one included."""
        def tx(cur: Any) -> int:
            self.db.execute(cur, "UPDATE servers SET heartbeat = NOW WHERE id = ? AND revoked = 0", (server,))
            if cur.rowcount != 1:
                raise LeaseLost(f"server {server}'s lease was revoked (or forgotten)")
            self.db.execute(cur, "SELECT COUNT(*) FROM servers WHERE heartbeat + lease_s >= NOW "
                            "AND revoked = 0")
            return int(cur.fetchone()[0])

        return self.db.tx(tx)

    def unregister_server(self, server: str) -> None:
        def tx(cur: Any) -> None:
            self.db.execute(cur, "DELETE FROM connections WHERE server = ?", (server,))
            self.db.execute(cur, "DELETE FROM servers WHERE id = ?", (server,))

        self.db.tx(tx)

    def abort_lapsed(self) -> int:
        def tx(cur: Any) -> int:
            self.db.execute(cur, "UPDATE games SET status = 'aborted' WHERE status = 'running' AND "
                            "(server IS NULL OR server NOT IN "
                            "(SELECT id FROM servers WHERE heartbeat + lease_s >= NOW))")
            n = int(cur.rowcount)
            self.db.execute(cur, "DELETE FROM connections WHERE server NOT IN "
                            "(SELECT id FROM servers WHERE heartbeat + lease_s >= NOW)")
            # Servers gone for a day are forgotten (their games were aborted long ago).
            self.db.execute(cur, "DELETE FROM servers WHERE heartbeat + lease_s + 86400 < NOW")
            return n

        return self.db.tx(tx)

    def abort_match(self, match_id: str, *, first_host_gone: bool) -> int:
        """Mark aborted the games of `match_id` still running whose referee is gone (its lease
        lapsed, or its session ended: `session_gone`), and, with `first_host_gone`, those
        still with the referee that started them (epoch 0: the caller knows that process
        died). No referee takes an aborted game over (fleet/store.py `claim_lapsed` takes
        running games only) nor stores its result (a fenced `finish_game` needs it running):
        a resuming tournament runner (compete/runner.py `recover`) may then play it again.
        Returns how many stay running (with a live referee: one that took them over, or a
        cluster's worker)."""
        gone = session_gone(self.db.DIALECT)
        first = "epoch = 0 OR " if first_host_gone else ""

        def tx(cur: Any) -> int:
            self.db.execute(cur, "UPDATE games SET status = 'aborted' WHERE match_id = ? AND "
                            f"status = 'running' AND ({first}server IS NULL OR server NOT IN (SELECT s.id "
                            f"FROM servers s WHERE s.heartbeat + s.lease_s >= NOW AND s.revoked = 0 AND NOT "
                            f"{gone}))", (match_id,))
            self.db.execute(cur, "SELECT COUNT(*) FROM games WHERE match_id = ? AND status = 'running'",
                            (match_id,))
            return int(cur.fetchone()[0])

        return self.db.tx(tx)

    # -- connections, counted across every referee on this database
    def add_connection(self, server: str, conn: int, bot: str, limit: int) -> int:
        """Record connection `conn` of `bot` to `server` if the bot has fewer than `limit`
        on the referees whose lease is alive (this one included); returns how many it had
        (recorded only when under the limit). Bots are counted one at a time (an advisory
        lock per bot on PostgreSQL; SQLite's writes are serial): two referees cannot both
        let a bot's last connection in."""
        def tx(cur: Any) -> int:
            if self.db.DIALECT == "postgresql":
                key = int.from_bytes(lock_digest("connections", bot)[:8], "big", signed=True)
                self.db.execute(cur, "SELECT pg_advisory_xact_lock(?)", (key,))
            self.db.execute(cur, "SELECT COUNT(*) FROM connections c JOIN servers s ON s.id = c.server "
                            "WHERE c.bot = ? AND s.heartbeat + s.lease_s >= NOW AND NOT "
                            + session_gone(self.db.DIALECT), (bot,))
            had = int(cur.fetchone()[0])
            if had < limit:
                self.db.execute(cur, "INSERT INTO connections (server, conn, bot, since) "
                                "VALUES (?, ?, ?, NOW)", (server, conn, bot))
            return had

        return self.db.tx(tx)

    def keep_connections(self, server: str, live: Iterable[int]) -> None:
        """Forget `server`'s recorded connections other than `live` (those that ended,
        whether or not their removal reached the database then)."""
        keep = sorted(set(live))

        def tx(cur: Any) -> None:
            if keep:
                marks = ", ".join("?" * len(keep))
                self.db.execute(cur, f"DELETE FROM connections WHERE server = ? AND conn NOT IN ({marks})",
                                (server, *keep))
            else:
                self.db.execute(cur, "DELETE FROM connections WHERE server = ?", (server,))

        self.db.tx(tx)

    def ping(self) -> None:
        self.db.query("SELECT 1")

    def get_game(self, game_id: int) -> GameRecord | None:
        rows = self.db.query(f"SELECT {_GAME_COLS} FROM games g LEFT JOIN results r "
                             "ON r.game_id = g.id WHERE g.id = ?", (game_id,))
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
        return [_game_record(r) for r in self.db.query(sql, (*args, int(limit)))]

    def get_replay(self, game_id: int) -> dict[str, Any] | None:
        rows = self.db.query("SELECT data FROM replays WHERE game_id = ?", (game_id,))
        return json.loads(rows[0][0]) if rows else None

    def close(self) -> None:
        self.db.close()


class SQLiteStorage(Storage):
    """The games store in an SQLite file (or `:memory:`)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        from maag.server.storage.sqlite import SQLiteDatabase

        super().__init__(SQLiteDatabase(path))


def _game_record(r: tuple[Any, ...]) -> GameRecord:
    return GameRecord(id=int(r[0]), game=r[1], config=json.loads(r[2]), seats=(r[3], r[4]), time_control=r[5],
                      match_id=r[6], status=r[7], created=r[8], winner=r[9], reason=r[10], plies=r[11],
                      finished=r[12], verdict=None if r[13] is None else json.loads(r[13]))


def open_storage(url: str | os.PathLike[str] | DbTarget | None = None) -> Storage:
    """The games store of a `--db` value or DbTarget (backend.py's `resolve_db`: a path, a
    backend's URL; None: `$MAAG_DB`, else the default SQLite file)."""
    return Storage(open_database(url))


class AsyncStorage:
    """Runs a Storage's blocking calls on one dedicated thread, the jobs that queue up
    committed together (storage/worker.py); awaitable from the loop."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self.fence: str | None = None
        """The referee whose lease fences the results written through here (None: unfenced)."""
        self.thread = StorageThread(storage.db)

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Call `fn` on the storage thread (its jobs run one at a time, in order; it returns
        once its writes are committed)."""
        return await self.thread.run(lambda: fn(*args, **kwargs))

    async def apply(self, fn: Callable[Concatenate[Storage, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn(store, *args)` on the storage thread, in order with the games' writes: for a
        job written over the blocking store (fleet/store.py's)."""
        return await self.run(fn, self.storage, *args, **kwargs)

    async def read(self, fn: Callable[Concatenate[Storage, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn(store, *args)` beside the storage thread: a page's query (web/people.py's) may
        take seconds and must not hold up a game's row or result queued behind it."""
        return await asyncio.to_thread(fn, self.storage, *args, **kwargs)

    # The reads below serve pages: off the storage thread, as `read`.
    async def get_game(self, game_id: int) -> GameRecord | None:
        return await asyncio.to_thread(self.storage.get_game, game_id)

    async def list_games(self, match_id: str | None = None, status: str | None = None,
                         limit: int = 1000) -> list[GameRecord]:
        return await asyncio.to_thread(self.storage.list_games, match_id, status, limit)

    async def get_replay(self, game_id: int) -> dict[str, Any] | None:
        return await asyncio.to_thread(self.storage.get_replay, game_id)

    async def register_server(self, server: str, name: str, lease_s: float) -> None:
        await self.run(self.storage.register_server, server, name, lease_s)

    async def heartbeat(self, server: str) -> int:
        return await self.run(self.storage.heartbeat, server)

    async def unregister_server(self, server: str) -> None:
        await self.run(self.storage.unregister_server, server)

    async def add_connection(self, server: str, conn: int, bot: str, limit: int) -> int:
        return await self.run(self.storage.add_connection, server, conn, bot, limit)

    async def keep_connections(self, server: str, live: Iterable[int]) -> None:
        await self.run(self.storage.keep_connections, server, live)

    async def bot_by_token(self, token: str) -> str | None:
        return await self.run(self.storage.bot_by_token, token)

    async def valid_token_hashes(self, hashes: list[str]) -> set[str]:
        return await self.run(self.storage.valid_token_hashes, hashes)

    async def create_game(self, game: str, config: dict[str, Any], seats: tuple[str, str], time_control: str,
                          match_id: str | None = None, server: str | None = None,
                          link_secret: str | None = None) -> int:
        return await self.run(self.storage.create_game, game, config, seats, time_control, match_id, server,
                              link_secret)

    async def finish_game(self, game_id: int, replay: dict[str, Any], fenced: bool = True,
                          actions_json: str | None = None) -> None:
        """Store a result, fenced by `fence` (the server whose lease the writes need) if set
        and `fenced` (not for a result adopted from another server's spill file);
        `actions_json`: see Storage.finish_game."""
        await self.run(self.storage.finish_game, game_id, replay, self.fence if fenced else None,
                       actions_json)

    def close(self) -> None:
        self.thread.stop()
        self.storage.close()
