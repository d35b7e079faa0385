"""The SQLite backend (`sqlite:///PATH`, or a plain path): one file in WAL mode with
synchronous=FULL, so that a committed result survives a crash of the process or the
machine; write transactions BEGIN IMMEDIATE; a lock is an `flock` on a file beside the
database, which the operating system releases when the process dies."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
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
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._held: list[IO[str]] = []

    def ensure(self, ddl: str, columns: Columns = ()) -> None:
        with self._lock:
            self._db.executescript(ddl.format(**self.TYPES))
            for table, column, kind in columns:
                if column not in {r[1] for r in self._db.execute(f"PRAGMA table_info({table})")}:
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")

    def tx(self, fn: Callable[[Any], T]) -> T:
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


def open_url(url: str, *, busy_timeout_s: float = 30.0) -> SQLiteDatabase:
    """The database of `sqlite:///PATH` (PATH may be `:memory:`), as backend.resolve_db
    wrote it."""
    return SQLiteDatabase(url[len(PREFIX):] if url.startswith(PREFIX) else url, busy_timeout_s)
