"""The one interface every database backend implements (`Database`), the errors of storage,
and the one URL dispatcher (`open_database`) that the games store, the tournaments' schedule
and the submissions store are all opened through.

A store (base.py's `Storage`, tournaments.py's `TournamentStore`, submissions.py's
`SubmissionStore`) is written once, in SQL with `?` placeholders, over a `Database`; a
backend is one module (sqlite.py, postgres.py) defining a subclass of `Database`, named in
`BACKENDS` by its URL schemes. What a backend supplies: a connection that survives as well as
it can, a write transaction committed durably before it returns, its SQL dialect (the
placeholder, the database's clock, the column types of the DDL templates, row locking), the
schema's creation with its column migrations, and a lock held by this process until it
closes or dies.
"""

from __future__ import annotations

import abc
import hashlib
import importlib
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["Database", "StorageError", "StorageUnavailable", "LeaseLost", "UnsupportedURL", "Columns",
           "BACKENDS",
           "open_database", "default_db_path", "user_path"]

T = TypeVar("T")

Columns = Sequence[tuple[str, str, str]]
"""Column migrations: (table, column, SQL type) added to tables made before the column."""


class StorageError(Exception):
    """A storage operation was refused (e.g. a bot name already taken)."""


class StorageUnavailable(StorageError):
    """The database cannot be reached now (connection lost, server restarting, file locked):
    the operation did not happen, or its outcome is unknown; retrying later is safe."""


class LeaseLost(StorageError):
    """A write fenced by this server's lease was refused: its lease lapsed and another server
    revoked it (and took over its games), so nothing it writes about a game is accepted any
    more; the server must stop (storage/fleet.py)."""


class UnsupportedURL(StorageError, ValueError):
    """A `--db` value that names no backend."""


_NOW = re.compile(r"\bNOW\b")


class Database(abc.ABC):
    """One connection to one database, used under a lock (open one per store and process).

    The SQL that stores hand to it uses `?` placeholders and `NOW` for the database's clock
    in seconds since the epoch (`sql` translates both); their DDL is a template whose
    `{key}` (an auto-increment primary key), `{ref}` (a column referring to one), `{real}`
    (a double) and `{blob}` (bytes) are filled from `TYPES`."""

    DIALECT: str
    """"sqlite" or "postgresql": the name a store may test for its few dialect differences."""
    PARAM: str
    """The backend's parameter placeholder."""
    NOW: str
    """The database's clock in seconds since the epoch, as an SQL expression: leases are
    compared with one clock, the database's, whatever the servers' clocks say."""
    TYPES: dict[str, str]
    """The column types that fill a DDL template."""
    SKIP_LOCKED: str = ""
    """What follows a SELECT that claims rows, so that two claimers take different rows."""
    url: str
    """The `--db` value that opens this database again (from another process too)."""

    def sql(self, text: str) -> str:
        """`text` with `?` placeholders and `NOW` for this backend."""
        return _NOW.sub(self.NOW, text.replace("?", self.PARAM))

    @abc.abstractmethod
    def ensure(self, ddl: str, columns: Columns = ()) -> None:
        """Create the tables of a DDL template (idempotent statements separated by `;`)
        and add the `columns` an older table lacks; safe when several processes open a fresh
        database at once."""

    @abc.abstractmethod
    def tx(self, fn: Callable[[Any], T]) -> T:
        """fn(cursor) in one write transaction, committed durably before returning and
        rolled back if fn raises; StorageUnavailable if the database cannot be reached."""

    @abc.abstractmethod
    def query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one read (`sql` with `?` placeholders, translated here)."""

    @abc.abstractmethod
    def try_lock(self, kind: str, name: str) -> bool:
        """Take the lock `name` of `kind` (e.g. a tournament's runner) for this process
        until close(), released by the operating system or the database if the process dies;
        False if another process holds it."""

    @abc.abstractmethod
    def close(self) -> None: ...

    def execute(self, cur: Any, sql: str, args: Sequence[Any] = ()) -> Any:
        """Run `sql` (with `?` placeholders) on a cursor of `tx`; the cursor."""
        cur.execute(self.sql(sql), tuple(args))
        return cur


def lock_digest(kind: str, name: str) -> bytes:
    """What names a lock in a backend that has no names for locks."""
    return hashlib.sha256(f"maag-{kind}:{name}".encode()).digest()


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


# URL scheme -> the module of this package that is its backend; the module's
# `open_url(url, busy_timeout_s=...)` returns its Database. A new backend: one module, one
# line here (docs/architecture.md, "Adding a storage backend").
BACKENDS = {"sqlite": "sqlite", "postgresql": "postgres", "postgres": "postgres"}


def open_database(url: str | os.PathLike[str] | None = None, *, busy_timeout_s: float = 30.0) -> Database:
    """The database of a `--db` value: SCHEME://... for a backend of BACKENDS (sqlite:///PATH
    for an SQLite file), a plain path for an SQLite file, None for the default SQLite file
    ($MAAG_DB, else maag.sqlite3 in the user's data directory). `busy_timeout_s`: how long
    a write may wait for another process's before it fails (where the backend waits)."""
    text = str(default_db_path() if url is None else url)
    scheme, sep, _ = text.partition("://")
    if not sep:
        scheme, text = "sqlite", "sqlite:///" + text
    if scheme not in BACKENDS:
        raise UnsupportedURL(f"unsupported storage URL {text!r} (use a file path, "
                           + " or ".join(f"{s}://..." for s in BACKENDS) + ")")
    module = importlib.import_module(f"maag.server.storage.{BACKENDS[scheme]}")
    db: Database = module.open_url(text, busy_timeout_s=busy_timeout_s)
    return db
