"""One scheduler per ladder and database: the ladder's lock (PostgreSQL: a session advisory
lock, released when its process dies; SQLite: a file lock), held by the process that pairs.

A ladder takes it at start (`take`: LadderBusy if another process holds it, or with
`standby`, waits for it); a fleet's process stands by and tries it every STANDBY_POLL_S
(`try_take`). The holder checks every LEAD_CHECK_S that the lock's connection is alive: lost
(the database restarted), no game is paired until it is taken again; taken meanwhile by
another process, this one stops (`lost` says why).

A holder that went silent without its session ending (its machine's link cut: nothing
closed its connection, which lingers on the database server until TCP gives up, hours with
the defaults; or its machine frozen) would keep the lock, and the ladder would stop. So the
holder names its lock's session after its referee (`application_name` HOLDER + the
referee's id in the database's `servers`), and a fleet's standby that finds the lock taken
ends that session (`pg_terminate_backend`) when, and only when, the holder's lease has lapsed
in the database (fencing: a referee whose lease lapsed writes nothing more about a game, and
a scheduler whose epoch was raised assigns nothing: fleet/assignments.py), then takes the
lock at its next try. PostgreSQL lets a role end its own sessions; the fleet's members share
one role (docs/competitions.md, "Running a fleet").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable

from maag.server.compete.ladder_report import LadderEvent
from maag.server.storage.backend import Database, lock_digest, open_database

__all__ = ["LadderLock", "LadderBusy", "STANDBY_POLL_S", "LEAD_CHECK_S", "HOLDER"]

LOG = logging.getLogger("maag.server.compete.ladder")  # (the ladder's log)

STANDBY_POLL_S = 0.5
"""A standby ladder tries to take the ladder's lock this often."""
LEAD_CHECK_S = 2.0
"""The leader checks this often that its lock's database connection is alive."""
HOLDER = "maag-ladder:"
"""The lock's session's `application_name`, followed by its referee's id (PostgreSQL)."""


class LadderBusy(RuntimeError):
    """Another process schedules this ladder on this database."""


class LadderLock:
    """The lock of ladder `name` on the database `db_url` (see the module); `on_event` is told
    standby and leading, `wake` when this process must stop, `stopping` whether it is."""

    def __init__(self, db_url: str, name: str, *, standby: bool, on_event: Callable[[LadderEvent], None],
                 wake: Callable[[], None], stopping: Callable[[], bool],
                 referee: Callable[[], str | None] = lambda: None) -> None:
        """`referee`: the id of this process's referee (its lease in `servers`), once it has one."""
        self.db_url, self.name, self.standby = db_url, name, standby
        self.on_event, self.wake, self.stopping = on_event, wake, stopping
        self.referee = referee
        self.db: Database | None = None
        """The connection holding the lock: one scheduler per ladder and database, whatever the
        number of processes."""
        self.leading = True  # False while the lock is lost with its database connection
        self.lost: str | None = None
        """Why this process must stop: another one took the lock while ours was lost."""
        self._checked = time.monotonic()
        self._check: asyncio.Task[None] | None = None
        self._tried = -math.inf

    async def take(self) -> None:
        """Hold the ladder's lock before reading its history and pairing anyone: LadderBusy
        if another process holds it, or with `standby`, wait until it is released (that
        process stopped or died) and take over."""
        self.db = db = open_database(self.db_url)
        if await asyncio.to_thread(db.try_lock, "ladder", self.name):
            await asyncio.to_thread(self._name_session, db)
            return
        if not self.standby:
            db.close()
            self.db = None
            raise LadderBusy(f"ladder {self.name!r} is already scheduled by another process on this database "
                             "(--standby waits and takes over when it stops)")
        self.on_event(LadderEvent("standby"))
        while not await asyncio.to_thread(db.try_lock, "ladder", self.name):
            if self.stopping():
                raise LadderBusy(f"stopped while standing by for ladder {self.name!r}")
            await asyncio.sleep(STANDBY_POLL_S)
        await asyncio.to_thread(self._name_session, db)
        self.on_event(LadderEvent("leading"))

    async def try_take(self) -> bool:
        """A fleet's process standing by: True if it holds the lock now (tried every
        STANDBY_POLL_S; the caller then says `leading` once it has read the history)."""
        now = time.monotonic()
        if now - self._tried < STANDBY_POLL_S:
            return False
        self._tried = now
        try:
            db: Database = self.db or await asyncio.to_thread(open_database, self.db_url)
            self.db = db
            if await asyncio.to_thread(db.try_lock, "ladder", self.name):
                await asyncio.to_thread(self._name_session, db)
                return True
        except Exception as e:  # (the database away, or the old lock's connection lost)
            LOG.warning("ladder %s: its lock not tried (%s)", self.name, e)
            self.release(str(e))
            return False
        try:
            await asyncio.to_thread(self._fence, db)
        except Exception as e:  # (refused: the holder is another role's session)
            LOG.warning("ladder %s: its silent scheduler's session not ended (%s)", self.name, e)
        return False

    def _name_session(self, db: Database) -> None:
        """Name the lock's session after this referee (PostgreSQL), for `_fence`."""
        referee = self.referee()
        if db.DIALECT == "postgresql" and referee is not None:
            db.query("SELECT set_config('application_name', ?, false)", (HOLDER + referee,))

    def _fence(self, db: Database) -> None:
        """The lock is held by another session: end it if its referee's lease has lapsed in
        the database (or its referee is unknown there any more); see the module. The lock
        is then free for the next try (the session's end takes a moment)."""
        if db.DIALECT != "postgresql":
            return  # (SQLite: a file lock, gone with its process; a fleet is run on PostgreSQL)
        key = int.from_bytes(lock_digest("ladder", self.name)[:8], "big", signed=True)
        n = len(HOLDER)
        rows = db.query(
            "SELECT a.application_name, pg_terminate_backend(l.pid) FROM pg_locks l "
            "JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted "
            "AND l.objsubid = 1 AND l.classid::BIGINT = ? AND l.objid::BIGINT = ? "
            "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            f"AND l.pid <> pg_backend_pid() AND left(a.application_name, {n}) = ? "
            f"AND NOT EXISTS (SELECT 1 FROM servers s WHERE s.id = substr(a.application_name, {n + 1}) "
            "AND s.revoked = 0 AND s.heartbeat + s.lease_s >= NOW)",
            ((key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF, HOLDER))
        for holder, ended in rows:
            LOG.warning("ladder %s: its scheduler %s went silent and its lease lapsed: its database session "
                        "%s, and with it the ladder's lock", self.name, holder[n:],
                        "ended" if ended else "could not be ended (another role's?)")

    def release(self, why: str) -> None:
        """Another process schedules the ladder now, or the lock's connection is gone: this one
        stands by again (fleet)."""
        announce = self.leading
        self.leading = False
        if self.db is not None:
            with contextlib.suppress(Exception):
                self.db.close()
            self.db = None
        if announce:
            self.on_event(LadderEvent("standby"))

    def maintain(self, now: float, *, fleet: bool) -> None:
        """On the ladder's tick: check the lock every LEAD_CHECK_S (not while a fleet's process
        stands by: it takes the lock in `try_take`, which also raises the epoch)."""
        due = now - self._checked >= LEAD_CHECK_S
        if self.db is not None and self._check is None and due and (not fleet or self.leading):
            self._checked = now
            self._check = asyncio.get_running_loop().create_task(self._check_lead())

    async def _check_lead(self) -> None:
        """Is the ladder's lock still ours? On PostgreSQL it lives as long as its connection,
        which is not made again by itself: lost (the database restarted, or went away), the
        lock is gone too, and no new game is paired until this process takes it again (the
        games in progress go on; the server's own outage limit ends a long absence with exit
        status 3). If another process took it meanwhile, this one stops."""
        try:
            if self.leading:
                assert self.db is not None
                await asyncio.to_thread(self.db.query, "SELECT 1")
                return
            db = await asyncio.to_thread(open_database, self.db_url)
            if await asyncio.to_thread(db.try_lock, "ladder", self.name):
                old, self.db = self.db, db
                if old is not None:
                    with contextlib.suppress(Exception):
                        old.close()
                self.leading = True
                LOG.warning("ladder %s: holds its lock again; pairing resumes", self.name)
            else:
                db.close()
                self.lost = (f"another process took over ladder {self.name!r} while this one's "
                             "database connection was lost; stopping (one process schedules a ladder)")
                self.wake()
        except Exception as e:
            if self.leading:
                self.leading = False
                LOG.warning("ladder %s: lost its lock with its database connection (%s); no new game until "
                            "it is taken again", self.name, e)
        finally:
            self._check = None

    async def close(self) -> None:
        """Release the lock (last: a standby takes over once every result is stored)."""
        if self._check is not None:
            with contextlib.suppress(Exception):
                await self._check
        if self.db is not None:
            self.db.close()
            self.db = None
