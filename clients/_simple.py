"""A blocking wrapper around the asyncio `Client`, for scripts without an event loop
(python-chess's SimpleEngine): the client runs in a background thread."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from types import TracebackType
from typing import Any, TypeVar

from maag.protocol import Welcome

from ._bot import Bot
from ._client import Address, BotFactory, Client, ClientStats
from ._errors import BotError

_T = TypeVar("_T")

SLACK_S = 5.0  # seconds added to every wait on the server beyond the caller's own timeout


class SimpleClient:
    """A connected client whose methods block.

        with SimpleClient.connect(MyBot, "127.0.0.1:7878", token=TOKEN) as client:
            stats = client.play()
    """

    def __init__(self, client: Client, loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
        self.client = client
        self._loop = loop
        self._thread = thread
        self._run: concurrent.futures.Future[ClientStats] | None = None

    @classmethod
    def connect(cls, bot: type[Bot] | BotFactory, address: str | Address, *, token: str,
                timeout: float = 10.0, **kwargs: Any) -> SimpleClient:
        """Connect to `address` ("HOST:PORT", "unix:PATH" or "fd:N") and log in (`Client`'s
        keyword arguments are accepted)."""
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="maag-client", daemon=True)
        thread.start()
        client = Client(bot, token=token, **kwargs)
        self = cls(client, loop, thread)
        try:
            self._call(client.connect(address, timeout), timeout + SLACK_S)
        except BaseException:
            self._stop_loop()
            raise
        return self

    @property
    def welcome(self) -> Welcome:
        assert self.client.welcome is not None
        return self.client.welcome

    def play(self, timeout: float | None = None) -> ClientStats:
        """Play until the server closes or `stop_after` games are over; TimeoutError after
        `timeout` seconds (the client keeps running: call close())."""
        if self._run is None:
            self._run = asyncio.run_coroutine_threadsafe(self.client.run(), self._loop)
        return self._run.result(timeout)

    def ping(self, timeout: float = 10.0) -> float:
        """Round-trip time in seconds; needs play() running in another thread."""
        return self._call(self.client.ping(timeout), timeout + SLACK_S)

    def close(self) -> None:
        """Close the connection and stop the background thread (idempotent)."""
        if not self._thread.is_alive():
            return
        try:
            self._call(self.client.close(), SLACK_S)
        except (BotError, concurrent.futures.TimeoutError):
            pass
        if self._run is not None:
            try:
                self._run.result(SLACK_S)
            except BaseException:
                pass
        self._stop_loop()

    def _call(self, coro: Coroutine[Any, Any, _T], timeout: float | None) -> _T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def __enter__(self) -> SimpleClient:
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
