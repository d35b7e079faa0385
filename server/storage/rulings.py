"""A host's rulings on its competition, kept in the table `rulings` with who made each, when
and why (docs/competitions.md, "Governing a competition"):

- `void`: a finished game is taken out of every rating and strike history. Its row's status
  becomes `voided` (everything that rates or strikes reads finished games only) and its
  result and replay stay, for the record; in a tournament's schedule the game keeps its
  place, with no result (reason `voided`): it is not played again.
- `pardon`: a bot's strike history is cleared up to that moment: the verdicts of its games
  up to the newest game stored then (`upto`, a game id) count towards no strike.

Who may rule on the web: the host's accounts (`maag host add NAME`), each with a token of its
own, kept like the bots' tokens (only its SHA-256, in the table `hosts`). On the command line
the host is whoever can open the database.

Written over the games store's own `Database` (base.py's schema has the table), so it works
on every backend."""

from __future__ import annotations

import datetime as _dt
import re
import secrets
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from maag.server.storage.base import Storage, StorageError, hash_token

__all__ = ["Ruling", "void_game", "pardon_bot", "list_rulings", "pardons", "latest", "pardoned_view",
           "add_host", "host_by_token", "host_by_token_hash", "list_hosts"]

_COLS = "id, kind, game_id, bot, upto, who, why, at"


@dataclass(frozen=True, slots=True)
class Ruling:
    id: int
    kind: str
    """void or pardon."""
    game_id: int | None
    """void: the game voided."""
    bot: str | None
    """pardon: the bot pardoned."""
    upto: int | None
    """pardon: the newest game id when it was made (its games up to this one are cleared)."""
    who: str
    why: str
    at: str
    """ISO-8601 UTC."""

    def describe(self) -> str:
        what = (f"game {self.game_id} voided" if self.kind == "void"
                else f"{self.bot} pardoned (its games up to game {self.upto})")
        return f"{what} by {self.who} at {self.at}: {self.why}"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "game_id": self.game_id, "bot": self.bot, "upto": self.upto,
                "who": self.who, "why": self.why, "at": self.at}


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


def _ruling(r: Sequence[Any]) -> Ruling:
    return Ruling(int(r[0]), str(r[1]), None if r[2] is None else int(r[2]), r[3],
                  None if r[4] is None else int(r[4]), str(r[5]), str(r[6]), str(r[7]))


def _check(who: str, why: str) -> None:
    if not why.strip():
        raise StorageError("say why (--why TEXT): the record of a ruling keeps who, when and why")
    if not who.strip():
        raise StorageError("say who rules (--by NAME)")


def void_game(storage: Storage, game_id: int, who: str, why: str) -> Ruling:
    """Void finished game `game_id` (StorageError if there is none, or it is running, aborted
    or voided already)."""
    from maag.server.storage.tournaments import TournamentStore

    _check(who, why)
    TournamentStore(storage.db)  # (its schedule's table exists: a tournament's game is voided there too)
    db = storage.db

    def tx(cur: Any) -> Ruling:
        db.execute(cur, "SELECT status FROM games WHERE id = ?", (game_id,))
        row = cur.fetchone()
        if row is None:
            raise StorageError(f"there is no game {game_id}")
        if row[0] != "finished":
            unrated = " (an aborted game is rated nowhere already)" if row[0] == "aborted" else ""
            raise StorageError(f"game {game_id} is {row[0]}: only a finished game is voided{unrated}")
        db.execute(cur, "UPDATE games SET status = 'voided' WHERE id = ? AND status = 'finished'", (game_id,))
        db.execute(cur, "UPDATE tournament_games SET winner = NULL, verdict = NULL, reason = 'voided' "
                   "WHERE game_id = ? AND status = 'done'", (game_id,))
        at = _now()
        db.execute(cur, f"INSERT INTO rulings (kind, game_id, who, why, at) VALUES ('void', ?, ?, ?, ?) "
                   f"RETURNING {_COLS}", (game_id, who, why, at))
        return _ruling(cur.fetchone())

    return db.tx(tx)


def pardon_bot(storage: Storage, bot: str, who: str, why: str) -> Ruling:
    """Clear `bot`'s strike history up to now, its hosted versions' (`bot@N`) too when `bot` is a
    bare name (StorageError if it never played here)."""
    _check(who, why)
    db = storage.db

    def tx(cur: Any) -> Ruling:
        # Its games, or (a pardon of NAME covers them) its hosted versions' NAME@N.
        n, prefix = len(bot) + 1, bot + "@"
        db.execute(cur, "SELECT MAX(id) FROM games WHERE seat0 = ? OR seat1 = ? OR substr(seat0, 1, ?) = ? "
                   "OR substr(seat1, 1, ?) = ?", (bot, bot, n, prefix, n, prefix))
        mine = cur.fetchone()
        if mine is None or mine[0] is None:
            raise StorageError(f"{bot!r} has played no game on this database: nothing to pardon")
        db.execute(cur, "SELECT MAX(id) FROM games")
        upto = int(cur.fetchone()[0])
        db.execute(cur, "INSERT INTO rulings (kind, bot, upto, who, why, at) "
                   f"VALUES ('pardon', ?, ?, ?, ?, ?) RETURNING {_COLS}", (bot, upto, who, why, _now()))
        return _ruling(cur.fetchone())

    return db.tx(tx)


def list_rulings(storage: Storage, *, game_id: int | None = None, bot: str | None = None) -> list[Ruling]:
    """Every ruling, oldest first (of one game, or about one bot: its pardons and the voids of
    its games)."""
    sql = f"SELECT {_COLS} FROM rulings"
    args: tuple[Any, ...] = ()
    if game_id is not None:
        sql += " WHERE game_id = ?"
        args = (game_id,)
    elif bot is not None:
        sql += " WHERE bot = ? OR game_id IN (SELECT id FROM games WHERE seat0 = ? OR seat1 = ?)"
        args = (bot, bot, bot)
    return [_ruling(r) for r in storage.db.query(sql + " ORDER BY id", args)]


def pardons(storage: Storage) -> dict[str, int]:
    """Per pardoned bot, the newest game its latest pardon cleared."""
    rows = storage.db.query("SELECT bot, MAX(upto) FROM rulings WHERE kind = 'pardon' GROUP BY bot")
    return {str(b): int(u) for b, u in rows}


def latest(storage: Storage) -> int:
    """The id of the newest ruling (0: none): a running ladder looks again when it grows."""
    rows = storage.db.query("SELECT MAX(id) FROM rulings")
    return int(rows[0][0] or 0) if rows else 0


def pardoned_view(games: Iterable[tuple[int, tuple[str, str, dict[str, Any] | None]]],
                  cleared: Mapping[str, int]) -> list[tuple[str, str, dict[str, Any] | None]]:
    """(seat 1, seat 2, verdict) triples for the strike policy (strikes.histories) from
    (game id, triple) pairs: a verdict against a bot pardoned after that game is dropped (the
    game counts as a clean one of its history). A pardon of NAME covers its hosted versions
    (NAME@N) too; one of NAME@N, that version alone."""
    out = []
    for gid, (a, b, v) in games:
        if v:
            loser = a if v.get("seat") == 1 else b
            upto = max(cleared.get(loser, -1), cleared.get(loser.split("@", 1)[0], -1))
            if gid <= upto:
                v = None
        out.append((a, b, v))
    return out


_HOSTS = """
CREATE TABLE IF NOT EXISTS hosts (
    name TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    created TEXT NOT NULL
);
"""
_HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


_ensured: weakref.WeakSet[Any] = weakref.WeakSet()


def _hosts(storage: Storage) -> None:
    """The table exists (made once per open database: a sign-in does not run DDL)."""
    if storage.db not in _ensured:
        storage.db.ensure(_HOSTS)
        _ensured.add(storage.db)


def add_host(storage: Storage, name: str, *, replace: bool = False) -> str:
    """A host account that may void games and pardon bots from the web view; returns its token
    (shown once: only its hash is kept). `replace` issues a new token for an existing one."""
    if not _HOST_NAME.fullmatch(name):
        raise StorageError(f"a host's name is 1 to 64 letters, digits, '_', '.' or '-' (not {name!r})")
    _hosts(storage)
    token = "maag_host_" + secrets.token_urlsafe(24)
    db = storage.db

    def tx(cur: Any) -> None:
        db.execute(cur, "SELECT 1 FROM hosts WHERE name = ?", (name,))
        if cur.fetchone() is not None:
            if not replace:
                raise StorageError(f"a host named {name!r} exists (use --replace to issue a new token)")
            db.execute(cur, "UPDATE hosts SET token_hash = ? WHERE name = ?", (hash_token(token), name))
        else:
            db.execute(cur, "INSERT INTO hosts (name, token_hash, created) VALUES (?, ?, ?)",
                       (name, hash_token(token), _now()))

    db.tx(tx)
    return token


def host_by_token(storage: Storage, token: str) -> str | None:
    """The host account whose token this is, or None."""
    return host_by_token_hash(storage, hash_token(token))


def host_by_token_hash(storage: Storage, token_hash: str) -> str | None:
    """The host account whose token has this hash (a signed-in session's token still stands)."""
    _hosts(storage)
    rows = storage.db.query("SELECT name FROM hosts WHERE token_hash = ?", (token_hash,))
    return str(rows[0][0]) if rows else None


def list_hosts(storage: Storage) -> list[str]:
    _hosts(storage)
    return [str(r[0]) for r in storage.db.query("SELECT name FROM hosts ORDER BY name")]
