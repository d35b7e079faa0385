"""What every SQL table set of maag shares, written once: the games schema in both
dialects, opening an SQLite file the way maag wants it, and one write transaction per
backend (the games storage and the tournaments' tables both use these)."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

# Bots, games, results and replays. {key}: an auto-increment primary key; {ref}: a column
# referring to it; {real}: a double. Everything else is the same SQL in both dialects.
_GAMES_SCHEMA = """
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    id {key},
    game TEXT NOT NULL,
    config TEXT NOT NULL,
    seat0 TEXT NOT NULL,
    seat1 TEXT NOT NULL,
    time_control TEXT NOT NULL,
    match_id TEXT,
    status TEXT NOT NULL,
    created TEXT NOT NULL,
    server TEXT
);
CREATE INDEX IF NOT EXISTS games_match ON games (match_id);
CREATE INDEX IF NOT EXISTS games_status ON games (status);
CREATE TABLE IF NOT EXISTS servers (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    started TEXT NOT NULL,
    heartbeat {real} NOT NULL,
    lease_s {real} NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    game_id {ref} PRIMARY KEY REFERENCES games (id),
    winner INTEGER,
    reason TEXT NOT NULL,
    plies INTEGER NOT NULL,
    think_ms0 {real},
    think_ms1 {real},
    finished TEXT NOT NULL,
    verdict TEXT
);
CREATE TABLE IF NOT EXISTS replays (
    game_id {ref} PRIMARY KEY REFERENCES games (id),
    seed TEXT NOT NULL,
    tags TEXT NOT NULL,
    data TEXT NOT NULL
);
"""
_DIALECTS = {
    "sqlite": {"key": "INTEGER PRIMARY KEY AUTOINCREMENT", "ref": "INTEGER", "real": "REAL"},
    "postgresql": {"key": "BIGSERIAL PRIMARY KEY", "ref": "BIGINT", "real": "DOUBLE PRECISION"},
}

# The database's clock in seconds since the epoch: leases are compared with one clock, the
# database's, whatever the servers' clocks say.
NOW_EPOCH = {
    "sqlite": "((julianday('now') - 2440587.5) * 86400.0)",
    "postgresql": "EXTRACT(EPOCH FROM clock_timestamp())::DOUBLE PRECISION",
}

# Columns added after a table's first release, for databases made by an older maag.
MIGRATIONS = (("games", "server", "TEXT"), ("results", "verdict", "TEXT"))


def games_schema(dialect: str) -> str:
    """The games tables' DDL for "sqlite" or "postgresql" (the `server` column of games is
    also in MIGRATIONS, for databases made before it existed; its index comes after them)."""
    return _GAMES_SCHEMA.format(**_DIALECTS[dialect])


def sqlite_migrate(db: sqlite3.Connection) -> None:
    """Add the MIGRATIONS' columns that an older database lacks."""
    for table, column, kind in MIGRATIONS:
        have = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
        if column not in have:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")


def sqlite_connect(path: str | os.PathLike[str], timeout: float = 30.0) -> sqlite3.Connection:
    """An SQLite connection in autocommit mode (transactions are explicit), WAL journal and
    synchronous=FULL: a committed result survives a crash of the process or the machine."""
    db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=timeout)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    return db


def sqlite_tx(db: sqlite3.Connection, lock: threading.Lock, fn: Callable[[sqlite3.Cursor], T]) -> T:
    """fn(cursor) in one write transaction (BEGIN IMMEDIATE), committed before returning and
    rolled back if fn raises."""
    with lock:
        cur = db.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            out = fn(cur)
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        cur.execute("COMMIT")
        return out


def postgres_tx(db: Any, lock: threading.Lock, fn: Callable[[Any], T]) -> T:
    """fn(cursor) in one PostgreSQL transaction, committed before returning."""
    with lock, db.transaction(), db.cursor() as cur:
        return fn(cur)
