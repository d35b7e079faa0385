"""PostgreSQL implementation of `maag.server.storage.base.Storage`, for hosted competitions
(`--db postgresql://USER:PASSWORD@HOST:PORT/DB`).

Same tables and semantics as the SQLite storage: a game row is written `running` when the
game starts; its result and replay are written with the status change in one transaction,
committed before the call returns (PostgreSQL's default `synchronous_commit=on` makes the
commit durable), so the referee sends `game_over` only for stored games. One connection per
object, used under a lock, and opened again after it is lost (`Reconnecting`); open one
object per process. The schema is created on first use under an advisory lock, so several
processes may open a fresh database at once.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import psycopg
from maag.server.storage.base import SQLStorage, StorageUnavailable
from maag.server.storage.sql import MIGRATIONS, games_schema

__all__ = ["PostgresStorage", "Reconnecting", "SCHEMA_LOCK"]

T = TypeVar("T")

SCHEMA_LOCK = 0x6D616167  # pg_advisory_xact_lock key held while creating the schema ("maag")

def connect(url: str, timeout: int = 10) -> psycopg.Connection[Any]:
    """An autocommit connection (transactions are explicit), or StorageUnavailable."""
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=timeout)
    except psycopg.Error as e:
        raise StorageUnavailable(f"cannot connect to PostgreSQL: {e}") from e


Columns = Sequence[tuple[str, str, str]]
"""Column migrations: (table, column, SQL type) added to tables made before the column."""


def _has_column(conn: psycopg.Connection[Any], table: str, column: str) -> bool:
    row = conn.execute("SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
                       "AND table_name = %s AND column_name = %s", (table, column)).fetchone()
    return row is not None


def ensure_schema(conn: psycopg.Connection[Any], ddl: str, columns: Columns = (),
                  lock: int = SCHEMA_LOCK) -> None:
    """Run `ddl` (idempotent statements), then add the `columns` a table lacks, in one
    transaction under an advisory lock. A column is altered in only when it is missing:
    ALTER TABLE takes an ACCESS EXCLUSIVE lock on the table even when IF NOT EXISTS makes it
    change nothing, and a process opening the store while another one's transaction reads and
    then writes that table deadlocked with it (a tournament runner starting beside a running one)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
        for stmt in ddl.split(";"):
            if stmt.strip():
                conn.execute(stmt)  # type: ignore[call-overload]
        for table, column, kind in columns:
            if not _has_column(conn, table, column):
                conn.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {kind}")  # type: ignore[call-overload]


class Reconnecting:
    """One PostgreSQL connection that is opened again after it is lost (a server restart, a
    network cut): an operation on a broken connection raises StorageUnavailable (and did not
    happen, or its commit's outcome is unknown) and the next operation reconnects. Retrying,
    with backoff, is the caller's: the referee's storage keeper, a runner's next claim."""

    def __init__(self, url: str, ddl: str, columns: Columns = ()) -> None:
        self.url = url
        self.ddl = ddl
        self.columns = columns
        self.lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        with self.lock:
            self._connected()

    def _connected(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed or self._conn.broken:
            if self._conn is not None:
                with contextlib.suppress(Exception):
                    self._conn.close()
                self._conn = None
            conn = connect(self.url, timeout=5)
            try:
                ensure_schema(conn, self.ddl, self.columns)
            except psycopg.OperationalError as e:
                conn.close()
                raise StorageUnavailable(f"PostgreSQL: {e}") from e
            self._conn = conn
        return self._conn

    def run(self, fn: Callable[[psycopg.Connection[Any]], T]) -> T:
        """fn(connection) under the lock, on a live connection."""
        with self.lock:
            conn = self._connected()
            try:
                return fn(conn)
            except (psycopg.OperationalError, psycopg.InterfaceError) as e:
                if conn.closed or conn.broken:
                    raise StorageUnavailable(f"lost the connection to PostgreSQL: {e}") from e
                raise

    def tx(self, fn: Callable[[psycopg.Cursor[Any]], T]) -> T:
        """fn(cursor) in one transaction, committed before returning."""
        def body(conn: psycopg.Connection[Any]) -> T:
            with conn.transaction(), conn.cursor() as cur:
                return fn(cur)

        return self.run(body)

    def query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        def body(conn: psycopg.Connection[Any]) -> list[tuple[Any, ...]]:
            with conn.cursor() as cur:
                cur.execute(sql, args)  # type: ignore[call-overload]
                return cur.fetchall()

        return self.run(body)

    def close(self) -> None:
        with self.lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class PostgresStorage(SQLStorage):
    """Storage in a PostgreSQL database given by URL (the queries are SQLStorage's)."""

    PARAM = "%s"
    DIALECT = "postgresql"

    def __init__(self, url: str) -> None:
        self.url = url
        self._pg = Reconnecting(url, games_schema("postgresql"), MIGRATIONS)

    def _tx(self, fn: Callable[[psycopg.Cursor[Any]], T]) -> T:
        return self._pg.tx(fn)

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return self._pg.query(sql, args)

    def close(self) -> None:
        self._pg.close()
