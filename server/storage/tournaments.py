"""The schedule of tournaments in the database (SQLite or PostgreSQL, the same `--db URL` as
the games): each scheduled game has a deterministic key and moves, transactionally,
`pending` -> `claimed` -> `done`; a claim that never finished (the runner was killed) is
recovered on restart. This is what makes `maag tournament` resumable without losing or
double-counting a game.

Only one runner works on a tournament at a time: `lock_runner` takes a lock that the
operating system or the database releases when the runner dies (an `flock` beside the
SQLite file; a session-level advisory lock in PostgreSQL).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from maag.server.storage.backend import Database, DbTarget, open_database

__all__ = ["ScheduledGame", "GameRow", "TournamentStore", "TournamentBusy", "SpecMismatch",
           "open_tournament_store"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tournaments (
    id TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tournament_games (
    tournament TEXT NOT NULL REFERENCES tournaments (id),
    game_key TEXT NOT NULL,
    round INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    seat0 TEXT NOT NULL,
    seat1 TEXT NOT NULL,
    seed BIGINT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    game_id BIGINT,
    winner INTEGER,
    reason TEXT,
    updated TEXT NOT NULL,
    PRIMARY KEY (tournament, game_key)
);
CREATE INDEX IF NOT EXISTS tournament_games_status ON tournament_games (tournament, status, seq);
CREATE TABLE IF NOT EXISTS tournament_secrets (
    tournament TEXT PRIMARY KEY REFERENCES tournaments (id),
    secret TEXT NOT NULL
)
"""


class TournamentBusy(Exception):
    """Another runner holds the tournament."""


class SpecMismatch(Exception):
    """A tournament of this id exists with a different specification."""


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """One game of a tournament's schedule. Seats are 0 (moves first) and 1."""

    key: str  # unique within the tournament; deterministic from the specification
    round: int
    seq: int  # order of play
    seat0: str
    seat1: str
    seed: int  # the referee's seed (the mirrored game of a pair has the same one)


@dataclass(frozen=True, slots=True)
class GameRow:
    """A scheduled game with its state: pending, claimed or done."""

    game: ScheduledGame
    status: str
    attempts: int
    game_id: int | None
    winner: int | None  # 0, 1, -1 for a draw; None until done
    reason: str | None
    search: list[dict[str, Any] | None] | None = None
    """Per seat, what its bot reported of its search (the game's `search` report), if known."""
    verdict: dict[str, Any] | None = None
    """For a forfeit: {"seat": 1 or 2, "kind": ..., "detail": ...} (the game's verdict)."""

    @property
    def score0(self) -> float | None:
        """Points of seat 0 (1, 0.5, 0), or None until done."""
        if self.status != "done" or self.winner is None:
            return None
        return {0: 1.0, 1: 0.0, -1: 0.5}[self.winner]


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


_COLS = "game_key, round, seq, seat0, seat1, seed, status, attempts, game_id, winner, reason, search, verdict"
# Columns added after the tables' first release, for databases made by an older maag.
_MIGRATIONS = (("tournament_games", "search", "TEXT"), ("tournament_games", "verdict", "TEXT"))


def _row(r: Sequence[Any]) -> GameRow:
    g = ScheduledGame(str(r[0]), int(r[1]), int(r[2]), str(r[3]), str(r[4]), int(r[5]))
    return GameRow(g, str(r[6]), int(r[7]), None if r[8] is None else int(r[8]),
                   None if r[9] is None else int(r[9]), r[10], None if r[11] is None else json.loads(r[11]),
                   None if r[12] is None else json.loads(r[12]))


class TournamentStore:
    """The schedule tables, on any backend (backend.py)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        db.ensure(_SCHEMA, _MIGRATIONS)

    def lock_runner(self, tid: str) -> None:
        """Hold tournament `tid` for this process until close(); TournamentBusy if taken."""
        if not self.db.try_lock("tournament", tid):
            raise TournamentBusy(f"another runner is playing tournament {tid!r}")

    def close(self) -> None:
        self.db.close()

    def open_tournament(self, tid: str, spec: dict[str, Any]) -> bool:
        """Create tournament `tid` with `spec`, or check that the stored one is the same.
        Returns True when it was created. SpecMismatch if `tid` has another spec."""
        text = json.dumps(spec, sort_keys=True, separators=(",", ":"))

        def tx(cur: Any) -> bool:
            row = self.db.execute(cur, "SELECT spec FROM tournaments WHERE id = ?", (tid,)).fetchone()
            if row is None:
                self.db.execute(cur, "INSERT INTO tournaments (id, spec, created) VALUES (?, ?, ?)",
                                (tid, text, _now()))
                return True
            if json.loads(row[0]) != json.loads(text):
                raise SpecMismatch(f"tournament {tid!r} exists with another specification; "
                                   "use another --name, or the same options as before")
            return False

        return self.db.tx(tx)

    def secret(self, tid: str) -> int:
        """The tournament's secret base seed: drawn from the OS's secure random source the
        first time it is asked for, then the same for every later run (a resumed tournament
        keeps its schedule). Bots never see it; it is what keeps the deals unpredictable."""
        fresh = secrets.randbits(63)

        def tx(cur: Any) -> int:
            row = self.db.execute(cur, "SELECT secret FROM tournament_secrets WHERE tournament = ?",
                                  (tid,)).fetchone()
            if row is not None:
                return int(row[0])
            self.db.execute(cur, "INSERT INTO tournament_secrets (tournament, secret) VALUES (?, ?)",
                            (tid, str(fresh)))
            return fresh

        return self.db.tx(tx)

    def spec(self, tid: str) -> dict[str, Any] | None:
        def tx(cur: Any) -> dict[str, Any] | None:
            row = self.db.execute(cur, "SELECT spec FROM tournaments WHERE id = ?", (tid,)).fetchone()
            return None if row is None else dict(json.loads(row[0]))

        return self.db.tx(tx)

    def add_games(self, tid: str, games: Sequence[ScheduledGame]) -> int:
        """Schedule `games` (those already scheduled are left alone); returns how many were new."""

        def tx(cur: Any) -> int:
            sql = "SELECT game_key FROM tournament_games WHERE tournament = ?"
            have = {r[0] for r in self.db.execute(cur, sql, (tid,)).fetchall()}
            now = _now()
            new = [g for g in games if g.key not in have]
            for g in new:
                self.db.execute(cur, "INSERT INTO tournament_games (tournament, game_key, round, seq, seat0, "
                                     "seat1, seed, status, attempts, updated) "
                                     "VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?)",
                                (tid, g.key, g.round, g.seq, g.seat0, g.seat1, g.seed, now))
            return len(new)

        return self.db.tx(tx)

    def claim(self, tid: str, limit: int = 1) -> list[ScheduledGame]:
        """Mark up to `limit` pending games (in `seq` order) claimed and return them."""

        def tx(cur: Any) -> list[ScheduledGame]:
            rows = self.db.execute(cur, f"SELECT {_COLS} FROM tournament_games WHERE tournament = ? "
                                        f"AND status = 'pending' ORDER BY seq, game_key LIMIT ?"
                                        f"{self.db.SKIP_LOCKED}", (tid, int(limit))).fetchall()
            out = [_row(r).game for r in rows]
            now = _now()
            for g in out:
                self.db.execute(cur, "UPDATE tournament_games SET status = 'claimed', attempts = "
                                     "attempts + 1, updated = ? WHERE tournament = ? AND game_key = ?",
                                (now, tid, g.key))
            return out

        return self.db.tx(tx)

    def finish(self, tid: str, key: str, game_id: int | None, winner: int, reason: str,
               search: Sequence[dict[str, Any] | None] | None = None,
               verdict: dict[str, Any] | None = None) -> bool:
        """Record the result of a claimed game (winner 0, 1 or -1; `search`: per seat, what
        its bot reported of its search). Returns False, changing nothing, if the game is not
        claimed (e.g. already done): a result counts once."""
        if winner not in (0, 1, -1):
            raise ValueError(f"winner must be 0, 1 or -1, not {winner!r}")
        search_text = None if search is None else json.dumps(list(search))
        verdict_text = None if verdict is None else json.dumps(verdict)

        def tx(cur: Any) -> bool:
            c = self.db.execute(cur, "UPDATE tournament_games SET status = 'done', game_id = ?, winner = ?, "
                                     "reason = ?, search = ?, verdict = ?, updated = ? "
                                     "WHERE tournament = ? AND game_key = ? AND status = 'claimed'",
                                (game_id, winner, reason, search_text, verdict_text, _now(), tid, key))
            return bool(c.rowcount == 1)

        return self.db.tx(tx)

    def withdraw(self, tid: str, bot: str) -> int:
        """Take `bot` out of the tournament (the strike policy): its games not yet played
        become `withdrawn` and are never played; returns how many."""

        def tx(cur: Any) -> int:
            c = self.db.execute(cur, "UPDATE tournament_games SET status = 'withdrawn', updated = ? "
                                     "WHERE tournament = ? AND status = 'pending' "
                                     "AND (seat0 = ? OR seat1 = ?)",
                                (_now(), tid, bot, bot))
            return int(c.rowcount)

        return self.db.tx(tx)

    def release(self, tid: str, key: str) -> bool:
        """Put a claimed game back to pending (it will be played again)."""

        def tx(cur: Any) -> bool:
            c = self.db.execute(cur, "UPDATE tournament_games SET status = 'pending', updated = ? "
                                     "WHERE tournament = ? AND game_key = ? AND status = 'claimed'",
                                (_now(), tid, key))
            return bool(c.rowcount == 1)

        return self.db.tx(tx)

    def rows(self, tid: str) -> list[GameRow]:
        """Every scheduled game of the tournament, in `seq` order."""

        def tx(cur: Any) -> list[GameRow]:
            sql = f"SELECT {_COLS} FROM tournament_games WHERE tournament = ? ORDER BY seq, game_key"
            rows = self.db.execute(cur, sql, (tid,)).fetchall()
            return [_row(r) for r in rows]

        return self.db.tx(tx)

    def tournaments(self) -> list[tuple[str, dict[str, Any], str]]:
        """(id, spec, created) of every stored tournament, oldest first."""

        def tx(cur: Any) -> list[tuple[str, dict[str, Any], str]]:
            sql = "SELECT id, spec, created FROM tournaments ORDER BY created, id"
            rows = self.db.execute(cur, sql).fetchall()
            return [(str(r[0]), json.loads(r[1]), str(r[2])) for r in rows]

        return self.db.tx(tx)


def open_tournament_store(url: str | os.PathLike[str] | DbTarget | None) -> TournamentStore:
    """The schedule store of a `--db` value or DbTarget (backend.py's `open_database`)."""
    return TournamentStore(open_database(url, busy_timeout_s=60))


@contextlib.contextmanager
def opened(url: str | os.PathLike[str]) -> Iterator[TournamentStore]:
    store = open_tournament_store(url)
    try:
        yield store
    finally:
        store.close()
