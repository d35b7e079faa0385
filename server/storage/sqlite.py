"""The SQLite backend (`sqlite:///PATH`, or a plain path): one file in WAL mode with
synchronous=FULL, so that a committed result survives a crash of the process or the
machine; write transactions BEGIN IMMEDIATE (several jobs' as savepoints of one, in a
`batch`: storage/worker.py); a lock is an `flock` on a file beside the database, which the
operating system releases when the process dies."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, TypeVar

from maag.server.storage.backend import Columns, Database, StorageUnavailable

__all__ = ["SQLiteDatabase", "open_url"]

T = TypeVar("T")
PREFIX = "sqlite:///"


class SQLiteDatabase(Database):
    DIALECT = "sqlite"
    PARAM = "?"
    NOW = "((julianday('now') - 2440587.5) * 86400.0)"
    TYPES = {"key": "INTEGER PRIMARY KEY AUTOINCREMENT", "ref": "INTEGER", "real": "REAL", "blob": "BLOB"}

    def __init__(self, path: str | os.PathLike[str], busy_timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        # What resolve_db reads back as this file from any folder (a plain path with a colon
        # in its name would be refused as a malformed URL).
        self.url = PREFIX + (str(path) if str(path) == ":memory:" else os.path.abspath(path))
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False,
                                   timeout=busy_timeout_s)
        self._lock = threading.Lock()
        self._batching: int | None = None  # the thread whose `batch` is open (it holds the lock)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._held: list[IO[str]] = []

    def ensure(self, ddl: str, columns: Columns = ()) -> None:
        if self._batching == threading.get_ident():  # (a job of a batch: a savepoint of it)
            self._in_batch(lambda cur: self._ensure(ddl, columns, script=False))
            return
        with self._lock:
            self._ensure(ddl, columns, script=True)

    def _ensure(self, ddl: str, columns: Columns, *, script: bool) -> None:
        text = ddl.format(**self.TYPES)
        if script:
            self._db.executescript(text)
        else:  # (executescript would commit the batch's transaction first)
            for statement in _statements(text):
                self._db.execute(statement)
        for table, column, kind in columns:
            if column not in {r[1] for r in self._db.execute(f"PRAGMA table_info({table})")}:
                self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")

    @contextlib.contextmanager
    def batch(self) -> Iterator[bool]:
        """One BEGIN IMMEDIATE ... COMMIT around this thread's `tx` and `query` calls until
        it ends (see Database.batch); the connection's lock is held throughout (another
        thread's call waits for the batch)."""
        try:
            with self._lock:
                cur = self._db.cursor()
                cur.execute("BEGIN IMMEDIATE")
                self._batching = threading.get_ident()
                try:
                    yield True
                    if not self._db.in_transaction:
                        raise StorageUnavailable("SQLite: the batch's transaction was rolled back under it")
                    cur.execute("COMMIT")
                except BaseException:
                    if self._db.in_transaction:
                        cur.execute("ROLLBACK")
                    raise
                finally:
                    self._batching = None
        except sqlite3.OperationalError as e:  # locked past the timeout, disk full, I/O error
            raise StorageUnavailable(f"SQLite: {e}") from e

    def _in_batch(self, fn: Callable[[Any], T]) -> T:
        """`tx` inside this thread's batch: fn under a savepoint."""
        if not self._db.in_transaction:  # (an earlier job's I/O error rolled the batch back)
            raise StorageUnavailable("SQLite: the batch's transaction was rolled back under it")
        cur = self._db.cursor()
        cur.execute("SAVEPOINT job")
        try:
            out = fn(cur)
        except BaseException:
            if self._db.in_transaction:
                cur.execute("ROLLBACK TO job")
                cur.execute("RELEASE job")
            raise
        cur.execute("RELEASE job")
        return out

    def tx(self, fn: Callable[[Any], T]) -> T:
        if self._batching == threading.get_ident():
            try:
                return self._in_batch(fn)
            except sqlite3.OperationalError as e:
                raise StorageUnavailable(f"SQLite: {e}") from e
        try:
            with self._lock:
                cur = self._db.cursor()
                cur.execute("BEGIN IMMEDIATE")
                try:
                    out = fn(cur)
                except BaseException:
                    cur.execute("ROLLBACK")
                    raise
                cur.execute("COMMIT")
                return out
        except sqlite3.OperationalError as e:  # locked past the timeout, disk full, I/O error
            raise StorageUnavailable(f"SQLite: {e}") from e

    def query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            if self._batching == threading.get_ident():
                return self._db.execute(self.sql(sql), tuple(args)).fetchall()
            with self._lock:
                return self._db.execute(self.sql(sql), tuple(args)).fetchall()
        except sqlite3.OperationalError as e:
            raise StorageUnavailable(f"SQLite: {e}") from e

    def try_lock(self, kind: str, name: str) -> bool:
        digest = hashlib.sha256(name.encode()).hexdigest()[:16]
        f = open(f"{self.path}.{kind}-{digest}.lock", "a+")  # noqa: SIM115 (held until close)
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            return False
        self._held.append(f)
        return True

    def close(self) -> None:
        with self._lock:
            self._db.close()
        for f in self._held:
            with contextlib.suppress(OSError):
                f.close()
        self._held.clear()


def _statements(script: str) -> list[str]:
    """The statements of an SQL script, each whole (sqlite3.complete_statement: a `;` inside
    a string or a trigger does not end one)."""
    out: list[str] = []
    buf = ""
    for part in script.split(";"):
        buf += part + ";"
        if sqlite3.complete_statement(buf):
            if buf.strip(" \t\r\n;"):
                out.append(buf)
            buf = ""
    return out


def open_url(url: str, *, busy_timeout_s: float = 30.0) -> SQLiteDatabase:
    """The database of `sqlite:///PATH` (PATH may be `:memory:`), as backend.resolve_db
    wrote it."""
    return SQLiteDatabase(url[len(PREFIX):] if url.startswith(PREFIX) else url, busy_timeout_s)
