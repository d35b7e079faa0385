"""The one interface every database backend implements (`Database`), the errors of storage,
and the one place a database is named: `resolve_db` turns a `--db` value, else `$MAAG_DB`,
else the default file, into a `DbTarget` (or refuses it, naming the accepted forms), and
`open_database` opens one; the games store, the tournaments' schedule and the submissions
store are all opened through it, by every command and service.

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
import contextlib
import hashlib
import importlib
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["Database", "StorageError", "StorageUnavailable", "LeaseLost", "UnsupportedURL", "Columns",
           "BACKENDS", "DB_FORMS", "DbTarget", "resolve_db",
           "open_database", "default_sqlite_path", "user_path"]

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
    more; the server must stop (fleet/store.py)."""


class UnsupportedURL(StorageError, ValueError):
    """A `--db` (or `$MAAG_DB`) value that is none of the accepted forms (DB_FORMS)."""


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

    def batch(self) -> contextlib.AbstractContextManager[bool]:
        """Several jobs' transactions as one, on this thread, for group commit (storage/
        worker.py): inside, each `tx` is a savepoint of the batch's transaction (its error
        undoes its own writes only) and `query` reads within it; the batch commits durably
        when it ends, and raises StorageUnavailable (nothing of it stored) if it cannot, or
        if the transaction was lost under it. Says whether it batches: a backend that does
        not (this default) runs each `tx` as its own transaction, as outside a batch."""
        return contextlib.nullcontext(False)

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


def default_sqlite_path() -> Path:
    """The database when neither `--db` nor `$MAAG_DB` names one: maag.sqlite3 in the
    user's data directory ($XDG_DATA_HOME/maag, default ~/.local/share/maag)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local/share")
    return Path(base, "maag", "maag.sqlite3")


# URL scheme -> the module of this package that is its backend; the module's
# `open_url(url, busy_timeout_s=...)` returns its Database. A new backend: one module, one
# line here (docs/architecture.md, "Adding a storage backend").
BACKENDS = {"sqlite": "sqlite", "postgresql": "postgres", "postgres": "postgres"}

DB_FORMS = ("PATH (an SQLite file), sqlite:///PATH (an SQLite file: sqlite:///NAME is relative to the "
            "current folder, sqlite:////ABS/PATH absolute), postgresql://USER:PASSWORD@HOST:PORT/DB (or postgres://...)")
"""The accepted forms of a database's name, as a refusal states them."""

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")  # what begins a URL (RFC 3986's scheme)
_SECRET = re.compile(r"(?<=:)[^:/@]*(?=@)")  # a password in USER:PASSWORD@HOST


@dataclass(frozen=True)
class DbTarget:
    """A database named by `resolve_db`: `url` opens it from any process in any folder
    (an SQLite file's path is absolute)."""

    url: str
    """`sqlite:///ABSOLUTE/PATH` (or `sqlite:///:memory:`), or the backend's URL as given."""
    scheme: str
    """The key of BACKENDS: "sqlite", "postgresql" or "postgres"."""

    @property
    def path(self) -> Path | None:
        """The SQLite file (None for another backend or an in-memory database)."""
        if self.scheme != "sqlite" or self.url == "sqlite:///:memory:":
            return None
        return Path(self.url[len("sqlite:///"):])

    def __str__(self) -> str:
        return self.url


def redact_url(text: str) -> str:
    """A database's name with the password of USER:PASSWORD@ replaced by ***."""
    return _SECRET.sub("***", text)


def resolve_db(value: str | os.PathLike[str] | None = None, *,
               environ: Mapping[str, str] | None = None) -> DbTarget:
    """The database a command uses: `value` (its `--db`), else `$MAAG_DB`, else
    default_sqlite_path() (an empty value counts as none: the docs' `--db "$MAAG_DB"` with
    the variable unset means the default). A plain path is an SQLite file; `sqlite:///PATH` an
    SQLite file at PATH (relative to the current folder unless it begins with /);
    `SCHEME://...` a backend of BACKENDS. Anything else that begins like a URL (`SCHEME:`)
    is refused with UnsupportedURL naming DB_FORMS: such a value is a mistake, and taken as a
    path it would make folders named after the URL (`postgresql:/...`). Nothing is opened or
    created here."""
    env = os.environ if environ is None else environ
    if isinstance(value, os.PathLike):  # a Path is a file, whatever its name
        return _sqlite(os.fspath(value))
    if value:
        source, text = "--db", value
    elif env.get("MAAG_DB"):
        source, text = "$MAAG_DB", env["MAAG_DB"]
    else:
        return _sqlite(str(default_sqlite_path()))

    def refuse(why: str) -> UnsupportedURL:
        return UnsupportedURL(f"{source} {redact_url(text)!r} names no database: {why}. Accepted: {DB_FORMS}")

    scheme, sep, rest = text.partition("://")
    if sep and _SCHEME.fullmatch(scheme + ":"):
        if scheme == "sqlite":
            if not rest.startswith("/") or rest == "/":
                raise refuse("an SQLite URL is sqlite:/// followed by the file's path")
            return _sqlite(rest[1:])
        if scheme in BACKENDS:
            return DbTarget(text, scheme)
        raise refuse(f"no database backend {scheme!r}")
    if _SCHEME.match(text):
        raise refuse("it begins like a URL (SCHEME:) but is none of the accepted forms (a file whose name "
                     "has a colon: write ./NAME)")
    return _sqlite(text)


def _sqlite(path: str) -> DbTarget:
    """The DbTarget of an SQLite file, its path made absolute (so the URL means the same
    file in a worker or a child process started elsewhere)."""
    if path != ":memory:":
        path = os.path.abspath(path)
    return DbTarget("sqlite:///" + path, "sqlite")


def open_database(url: str | os.PathLike[str] | DbTarget | None = None, *,
                  busy_timeout_s: float = 30.0) -> Database:
    """The database of a `--db` value (resolve_db's forms; None: `$MAAG_DB`, else the
    default file) or of a DbTarget. `busy_timeout_s`: how long a write may wait for another
    process's before it fails (where the backend waits)."""
    target = url if isinstance(url, DbTarget) else resolve_db(url)
    module = importlib.import_module(f"maag.server.storage.{BACKENDS[target.scheme]}")
    db: Database = module.open_url(target.url, busy_timeout_s=busy_timeout_s)
    return db
