"""The games store's tables (storage/base.py's `Storage` creates them): bots, games, results,
replays, the referees' leases and connections, and the fleet's tables beside them (the action
log, game starts, failed logins, a fleet ladder's presence and assignments; maag.server.fleet
writes them), so that every database has them all from its first opening. The DDL is a
template of the backend's column types (backend.py).
"""

from __future__ import annotations

__all__ = ["SCHEMA", "MIGRATIONS"]

# Bots, games, results and replays: a template of the backend's column types (backend.py).
SCHEMA = """
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
    server TEXT,
    epoch INTEGER NOT NULL DEFAULT 0,
    logged INTEGER NOT NULL DEFAULT 0,
    resume TEXT
);
CREATE INDEX IF NOT EXISTS games_match ON games (match_id);
CREATE INDEX IF NOT EXISTS games_status ON games (status);
CREATE TABLE IF NOT EXISTS servers (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    started TEXT NOT NULL,
    heartbeat {real} NOT NULL,
    lease_s {real} NOT NULL,
    revoked INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS connections (
    server TEXT NOT NULL,
    conn INTEGER NOT NULL,
    bot TEXT NOT NULL,
    since {real} NOT NULL,
    PRIMARY KEY (server, conn)
);
CREATE INDEX IF NOT EXISTS connections_bot ON connections (bot);
CREATE TABLE IF NOT EXISTS results (
    game_id {ref} PRIMARY KEY REFERENCES games (id),
    winner INTEGER,
    reason TEXT NOT NULL,
    plies INTEGER NOT NULL,
    think_ms0 {real},
    think_ms1 {real},
    finished TEXT NOT NULL,
    verdict TEXT,
    server TEXT
);
CREATE TABLE IF NOT EXISTS replays (
    game_id {ref} PRIMARY KEY REFERENCES games (id),
    seed TEXT NOT NULL,
    tags TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS game_starts (
    bot TEXT NOT NULL,
    server TEXT NOT NULL,
    at {real} NOT NULL
);
CREATE INDEX IF NOT EXISTS game_starts_at ON game_starts (at);
CREATE TABLE IF NOT EXISTS auth_failures (
    key TEXT PRIMARY KEY,
    n INTEGER NOT NULL,
    last {real} NOT NULL
);
CREATE TABLE IF NOT EXISTS game_actions (
    game_id {ref} NOT NULL REFERENCES games (id),
    seq INTEGER NOT NULL,
    epoch INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (game_id, seq)
);
CREATE TABLE IF NOT EXISTS fleet_bots (
    server TEXT NOT NULL,
    bot TEXT NOT NULL,
    free INTEGER NOT NULL,
    idle_since {real} NOT NULL,
    PRIMARY KEY (server, bot)
);
CREATE TABLE IF NOT EXISTS fleet_assignments (
    id {key},
    ladder TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    host TEXT NOT NULL,
    seat0 TEXT NOT NULL,
    seat1 TEXT NOT NULL,
    server1 TEXT NOT NULL,
    secret TEXT NOT NULL,
    seed TEXT,
    status TEXT NOT NULL,
    linked INTEGER NOT NULL DEFAULT 0,
    game_id INTEGER,
    created {real} NOT NULL,
    server0 TEXT,
    hosted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS fleet_assignments_status ON fleet_assignments (status);
CREATE TABLE IF NOT EXISTS fleet_hosts (
    server TEXT PRIMARY KEY,
    free INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS ladder_leaders (
    name TEXT PRIMARY KEY,
    epoch INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS rulings (
    id {key},
    kind TEXT NOT NULL,
    game_id {ref},
    bot TEXT,
    upto {ref},
    who TEXT NOT NULL,
    why TEXT NOT NULL,
    at TEXT NOT NULL
)
"""
# Columns added after a table's first release, for databases made by an older maag.
MIGRATIONS = (("games", "server", "TEXT"), ("results", "verdict", "TEXT"),
              ("games", "epoch", "INTEGER NOT NULL DEFAULT 0"),
              ("games", "logged", "INTEGER NOT NULL DEFAULT 0"),
              ("games", "resume", "TEXT"), ("results", "server", "TEXT"),
              ("servers", "revoked", "INTEGER NOT NULL DEFAULT 0"), ("servers", "link", "TEXT"),
              ("games", "link_secret", "TEXT"), ("fleet_assignments", "server0", "TEXT"),
              ("fleet_assignments", "hosted", "INTEGER NOT NULL DEFAULT 0"), ("servers", "session", "TEXT"))
