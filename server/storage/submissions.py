"""Submitted bots: each upload of a bot package is a numbered version of its bot, stored
content-addressed (SHA-256 of the archive; the archive itself in the database, so that every
referee process and Dask worker that shares the database can fetch it) with its manifest, a
status and the reports of its build and validation.

A version's status moves, each step in one transaction:

    pending -> building -> validating -> active -> retired
                  \\-> rejected     \\-> rejected

At most one version of a bot is active: activating one retires the one before (its games
and ratings stay). A version left `building` or `validating` by a process that died is put
back to `pending` by `recover` (called when a pipeline or ladder starts), so nothing stays
in a working state forever.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from maag.server.storage.backend import Database, DbTarget, open_database

__all__ = ["Version", "SubmissionStore", "open_submission_store", "STATUSES", "sha256_of"]

STATUSES = ("pending", "building", "validating", "active", "rejected", "retired")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS bot_versions (
    bot TEXT NOT NULL,
    version INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    size BIGINT NOT NULL,
    manifest TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,
    build_log TEXT,
    report TEXT,
    built TEXT,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    PRIMARY KEY (bot, version)
);
CREATE INDEX IF NOT EXISTS bot_versions_status ON bot_versions (status);
CREATE TABLE IF NOT EXISTS bot_packages (
    sha256 TEXT PRIMARY KEY,
    data {blob} NOT NULL
)
"""


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class Version:
    bot: str
    version: int
    sha256: str
    size: int
    manifest: dict[str, Any]
    status: str
    reason: str | None
    build_log: str | None
    report: dict[str, Any] | None
    created: str
    updated: str
    built: str | None = None
    """SHA-256 of the package as its build left it (what games run), when it has a build."""

    @property
    def run_sha256(self) -> str:
        """The package the games run: the built one, else the uploaded one."""
        return self.built or self.sha256

    @property
    def label(self) -> str:
        """NAME@VERSION, as tournaments and the ladder name it."""
        return f"{self.bot}@{self.version}"

    def to_dict(self, logs: bool = False) -> dict[str, Any]:
        report = self.report
        if report is not None and not logs and "bot_output" in report:
            # The bot's own output (a rejection's traceback) is its owner's, as its logs are.
            report = {k: v for k, v in report.items() if k != "bot_output"}
        d = {"bot": self.bot, "version": self.version, "sha256": self.sha256, "size": self.size,
             "manifest": self.manifest, "status": self.status, "reason": self.reason, "report": report,
             "created": self.created, "updated": self.updated}
        if logs:
            d["build_log"] = self.build_log
        return d


_COLS = "bot, version, sha256, size, manifest, status, reason, build_log, report, created, updated, built"


def _version(r: Sequence[Any]) -> Version:
    return Version(str(r[0]), int(r[1]), str(r[2]), int(r[3]), json.loads(r[4]), str(r[5]), r[6], r[7],
                   None if r[8] is None else json.loads(r[8]), str(r[9]), str(r[10]), r[11])


class SubmissionStore:
    """The versions and packages tables, on any backend (backend.py)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        db.ensure(_SCHEMA)

    def close(self) -> None:
        self.db.close()

    def _put_package(self, cur: Any, data: bytes) -> str:
        """Store an archive once per content; its SHA-256."""
        digest = sha256_of(data)
        if self.db.execute(cur, "SELECT 1 FROM bot_packages WHERE sha256 = ?", (digest,)).fetchone() is None:
            self.db.execute(cur, "INSERT INTO bot_packages (sha256, data) VALUES (?, ?)", (digest, data))
        return digest

    def add(self, bot: str, data: bytes, manifest: dict[str, Any]) -> Version:
        """Store a new version of `bot` (the package archive `data`), numbered after the last
        one, status pending; the archive is stored once per content."""
        digest = sha256_of(data)

        def tx(cur: Any) -> Version:
            self._put_package(cur, data)
            row = self.db.execute(cur, "SELECT MAX(version) FROM bot_versions WHERE bot = ?",
                                  (bot,)).fetchone()
            n = (int(row[0]) if row and row[0] is not None else 0) + 1
            now = _now()
            self.db.execute(cur, f"INSERT INTO bot_versions ({_COLS}) VALUES "
                                 "(?, ?, ?, ?, ?, 'pending', NULL, NULL, NULL, ?, ?, NULL)",
                            (bot, n, digest, len(data), json.dumps(manifest), now, now))
            return Version(bot, n, digest, len(data), manifest, "pending", None, None, None, now, now)

        return self.db.tx(tx)

    def get(self, bot: str, version: int | None = None) -> Version | None:
        """Version `version` of `bot`, or its active one when `version` is None."""

        def tx(cur: Any) -> Version | None:
            if version is None:
                r = self.db.execute(cur, f"SELECT {_COLS} FROM bot_versions WHERE bot = ? "
                                         "AND status = 'active'", (bot,)).fetchone()
            else:
                r = self.db.execute(cur, f"SELECT {_COLS} FROM bot_versions WHERE bot = ? AND version = ?",
                                    (bot, version)).fetchone()
            return None if r is None else _version(r)

        return self.db.tx(tx)

    def versions(self, bot: str | None = None, status: str | None = None) -> list[Version]:
        """Versions (of `bot`, with `status`), oldest first."""
        where, args = [], []
        if bot is not None:
            where.append("bot = ?")
            args.append(bot)
        if status is not None:
            where.append("status = ?")
            args.append(status)
        sql = f"SELECT {_COLS} FROM bot_versions" + (" WHERE " + " AND ".join(where) if where else "") + \
            " ORDER BY created, bot, version"
        return self.db.tx(lambda cur: [_version(r) for r in self.db.execute(cur, sql, args).fetchall()])

    def package(self, digest: str) -> bytes | None:
        def tx(cur: Any) -> bytes | None:
            r = self.db.execute(cur, "SELECT data FROM bot_packages WHERE sha256 = ?", (digest,)).fetchone()
            return None if r is None else bytes(r[0])

        return self.db.tx(tx)

    def move(self, bot: str, version: int, frm: Sequence[str], to: str, *, reason: str | None = None,
             build_log: str | None = None, report: dict[str, Any] | None = None,
             built: bytes | None = None) -> bool:
        """Move a version from one of `frm` to status `to` (with what the step produced);
        False, changing nothing, if it is not in one of `frm`. Activating retires the bot's
        active version in the same transaction."""
        if to not in STATUSES:
            raise ValueError(f"no status {to!r}")

        def tx(cur: Any) -> bool:
            r = self.db.execute(cur, "SELECT status FROM bot_versions WHERE bot = ? AND version = ?",
                                (bot, version)).fetchone()
            if r is None or r[0] not in frm:
                return False
            now = _now()
            built_sha = None if built is None else self._put_package(cur, built)
            if to == "active":
                self.db.execute(cur, "UPDATE bot_versions SET status = 'retired', updated = ? "
                                     "WHERE bot = ? AND status = 'active'", (now, bot))
            sets, args = ["status = ?", "updated = ?"], [to, now]
            for col, val in (("reason", reason), ("build_log", build_log), ("built", built_sha),
                             ("report", None if report is None else json.dumps(report))):
                if val is not None:
                    sets.append(f"{col} = ?")
                    args.append(val)
            self.db.execute(cur, f"UPDATE bot_versions SET {', '.join(sets)} WHERE bot = ? AND version = ?",
                            (*args, bot, version))
            return True

        return self.db.tx(tx)

    def recover(self) -> int:
        """Put back to pending every version left building or validating (a process died
        during its step); returns how many. Call when no pipeline runs on this database."""

        def tx(cur: Any) -> int:
            c = self.db.execute(cur, "UPDATE bot_versions SET status = 'pending', updated = ? "
                                     "WHERE status IN ('building', 'validating')", (_now(),))
            return int(c.rowcount)

        return self.db.tx(tx)


def open_submission_store(url: str | os.PathLike[str] | DbTarget | None) -> SubmissionStore:
    """The submissions store of a `--db` value or DbTarget (backend.py's `open_database`)."""
    return SubmissionStore(open_database(url, busy_timeout_s=60))
