"""The processing of uploaded versions in the web server's process: the submissions tables
opened at start-up (versions a stopped process left building or validating processed
again), and one worker that builds and validates each stored version in upload order through
`maag.server.hosting.api.process`, under the server's game, options and time control, its
logs in one folder per version."""

from __future__ import annotations

import asyncio
import logging
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web
from maag.server.printable import printable

if TYPE_CHECKING:
    from maag.server.net.model import ServerConfig
    from maag.server.storage.base import AsyncStorage, Storage
    from maag.server.storage.submissions import SubmissionStore

__all__ = ["Processing"]

LOG = logging.getLogger(__name__)


def _url(st: Storage) -> str:
    return st.url


class Processing:
    """The submissions tables and the queue of versions to build and validate."""

    def __init__(self, storage: AsyncStorage, server: ServerConfig, host: Any = None,
                 log_dir: Path | None = None) -> None:
        self.storage = storage
        self.server = server
        """The referee's settings: its game, game options and time control are the versions'."""
        self.host = host
        """HostOptions for the sandbox (None: the defaults)."""
        self.log_root = log_dir
        self.db_url = ""
        self.processing: str | None = None
        """The version being built or validated now (NAME@N), if any."""
        self._store: SubmissionStore | None = None
        self._queue: asyncio.Queue[tuple[str, int]] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

    @property
    def store(self) -> SubmissionStore:
        if self._store is None:
            raise web.HTTPServiceUnavailable(text="the web server is starting")
        return self._store

    @property
    def queued(self) -> int:
        return self._queue.qsize()

    def enqueue(self, bot: str, version: int) -> None:
        self._queue.put_nowait((bot, version))

    def version_log_dir(self, bot: str, version: int) -> Path:
        assert self.log_root is not None
        from maag.server.hosting.api import safe_name

        return self.log_root / safe_name(bot) / f"v{version}"

    async def startup(self, _: web.Application) -> None:
        from maag.server.storage.submissions import open_submission_store

        if self.log_root is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="maag-uploads-")
            self.log_root = Path(self._tmp.name)
        try:
            self.db_url = await self.storage.read(_url)
            self._store = store = await asyncio.to_thread(open_submission_store, self.db_url)
        except Exception:  # the rest of the view works; uploads and bots' pages answer 503
            LOG.exception("web: the submissions tables could not be opened; uploads are off")
            return
        # Versions a stopped web server left building or validating are processed again.
        n = await asyncio.to_thread(store.recover)
        if n:
            LOG.warning("%d version(s) left building or validating by a stopped process: processed again", n)
        for v in await asyncio.to_thread(store.versions, None, "pending"):
            self.enqueue(v.bot, v.version)
        self._worker = asyncio.ensure_future(self._work())

    async def cleanup(self, _: web.Application) -> None:
        if self._worker is not None:
            self._worker.cancel()
            try:
                await self._worker
            except (asyncio.CancelledError, Exception):
                pass
            self._worker = None
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    async def _work(self) -> None:
        from maag.server.hosting.api import HostOptions, process

        cfg = self.server
        options = self.host or HostOptions()
        while True:
            bot, n = await self._queue.get()
            try:
                v = await asyncio.to_thread(self.store.get, bot, n)
                if v is None or v.status != "pending":
                    continue  # another pipeline took it
                self.processing = v.label
                LOG.info("%s: building and validating", v.label)
                done = await process(self.store, self.db_url, v, game=cfg.game,
                                     game_config=dict(cfg.game_config), tc=str(cfg.tc), options=options,
                                     log_dir=self.version_log_dir(bot, n))
                LOG.info("%s: %s%s", done.label, done.status,
                         f" ({printable(done.reason)})" if done.reason else "")
            except asyncio.CancelledError:
                raise
            except Exception:
                LOG.exception("processing %s@%d failed", bot, n)
            finally:
                self.processing = None
