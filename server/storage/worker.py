"""The storage thread: a store's jobs run one at a time, in the order they were given, on one
thread, and the jobs that queued up while a commit was under way are committed together
(group commit, as database servers do with their log).

Why: a durable commit (SQLite's synchronous=FULL: the WAL written and synced) costs more than
most jobs' own work, and a busy referee gives its storage games to create, results to store
and its action log (fleet/takeover.py) faster than one commit at a time can take them: at
100 games, most jobs found five or more others waiting behind the one running.

Each job keeps its own transaction inside the batch's (a savepoint: `Database.batch`), so
one job's error (a lease lost, a game no longer running) undoes its own writes only and
reaches its own caller only. The batch's commit is every job's commit: no job is told it
succeeded before the commit is durable, and if the commit fails, or the transaction is lost
under the jobs (an I/O error), every job of the batch fails with that error and none of
their writes is stored. A backend that does not batch (`Database.batch` says so: PostgreSQL
for now) runs each job in its own transactions, as one job alone always does.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from maag.server.storage.backend import Database, StorageUnavailable

__all__ = ["StorageThread", "MAX_BATCH"]

T = TypeVar("T")
LOG = logging.getLogger("maag.server.storage")

MAX_BATCH = 64
"""The most jobs one commit takes (the write lock is held while they run: another process
writing the same SQLite file waits that long)."""

_Done = concurrent.futures.Future  # (a job's result as the thread sets it: any thread may wait on it)


class StorageThread:
    """Jobs on `db` run in order on one thread, committed in batches (see the module)."""

    def __init__(self, db: Database, name: str = "maag-storage") -> None:
        self.db = db
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], _Done[Any]] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)
        self._closed = False
        self._thread.start()
        # At the interpreter's exit, the jobs queued still run (a result being stored is not
        # cut off), as an executor's do; a daemon thread, so that one never stopped does not
        # hold the exit.
        atexit.register(self.stop)

    def submit(self, fn: Callable[[], T]) -> concurrent.futures.Future[T]:
        """Queue `fn()`; its future is set once it ran and its writes are committed."""
        if self._closed:
            raise RuntimeError("the storage thread is stopped")
        done: _Done[T] = concurrent.futures.Future()
        self._jobs.put((fn, done))
        return done

    async def run(self, fn: Callable[[], T]) -> T:
        """`submit`, awaited from an event loop (cancelling the wait drops the job if it has
        not started; a job started runs to its end)."""
        return await asyncio.wrap_future(self.submit(fn))

    def queued(self) -> int:
        """Jobs waiting behind the one running."""
        return self._jobs.qsize()

    def stop(self) -> None:
        """Run the jobs queued, then end the thread."""
        if not self._closed:
            self._closed = True
            atexit.unregister(self.stop)
            self._jobs.put(None)
            if threading.current_thread() is not self._thread:
                self._thread.join()

    # -- the thread -----------------------------------------------------------------------
    def _work(self) -> None:
        jobs = self._jobs
        while True:
            first = jobs.get()
            if first is None:
                return
            batch = [first]
            last = False
            while len(batch) < MAX_BATCH:
                try:
                    job = jobs.get_nowait()
                except queue.Empty:
                    break
                if job is None:
                    last = True
                    break
                batch.append(job)
            # A job whose caller gave up before it started is not run (as an executor's);
            # one started runs to its end.
            batch = [job for job in batch if job[1].set_running_or_notify_cancel()]
            try:
                if len(batch) == 1:
                    fn, done = batch[0]
                    _settle(done, *_call(fn))
                elif batch:
                    self._batch(batch)
            except BaseException:  # (a bug here must not end the thread: every later job would hang)
                LOG.exception("the storage thread's batch failed")
                for _, done in batch:
                    if not done.done():
                        done.set_exception(StorageUnavailable("the storage thread failed"))
            if last:
                return

    def _batch(self, batch: list[tuple[Callable[[], Any], _Done[Any]]]) -> None:
        outcomes: list[tuple[bool, Any]] = []
        try:
            with self.db.batch() as batched:
                for fn, done in batch:
                    if batched:
                        outcomes.append(_call(fn))
                    else:  # (each job its own transactions: its caller told at once)
                        _settle(done, *_call(fn))
            if not batched:
                return
        except Exception as e:  # not begun, not committed, or the transaction was lost: nothing stored
            outcomes = [(False, e)] * len(batch)
        for (_, done), outcome in zip(batch, outcomes, strict=True):
            _settle(done, *outcome)


def _call(fn: Callable[[], Any]) -> tuple[bool, Any]:
    """(True, fn()) or (False, the exception it raised)."""
    try:
        return True, fn()
    except BaseException as e:  # (handed to the job's caller)
        return False, e


def _settle(done: _Done[Any], ok: bool, value: Any) -> None:
    if ok:
        done.set_result(value)
    else:
        done.set_exception(value)
