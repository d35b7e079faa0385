"""Hosted bots over HTTP (issue 43): a participant uploads a new version of their bot with
the bot's own token, and the bot's page (botpage.py) shows its versions, reports, games and
score history; the owner, signed in with the token (signin.py), also sees the build logs and
the bot's logs for each game. `Submissions` puts the rooms together: the sign-in, the
processing of versions (worker.py), the bot's page and the upload routes here.

Routes (registered by WebServer through `Submissions.setup`; the sessions' in signin.py):

    GET    /api/bots/NAME              the bot's page (botpage.py)
    POST   /api/bots/NAME/versions     an upload: the package as the raw body or as the file
                                       field `package` of a multipart form; token in
                                       `Authorization: Bearer T` or the session cookie -> 202
                                       {version, poll} (status pending)
    GET    /api/bots/NAME/versions/N   one version (with its build log for the owner)
    GET    /api/bots/NAME/versions/N/logs   the owner's: the logs its build and smoke games wrote

An upload is authenticated before its body is read; a wrong, revoked or other bot's token is
answered 401 after a delay that doubles with each failure from the address or for the bot
(the lobby's login throttle: --auth-delay), storing nothing. Then the per-bot rate limit
(429), the size limit, enforced while reading (413; nothing beyond the limit is buffered), and
every check of `maag bot submit` (manifest, archive safety: 400 with the reason). A stored
version is built and validated by `maag.server.hosting.api.process` in this process,
one at a time in upload order, under the server's game, options and time control.
"""

from __future__ import annotations

import asyncio
import collections
import datetime as dt
import logging
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web
from maag.server.printable import printable, printable_all
from maag.server.web.botpage import BotPage, version_dict
from maag.server.web.origin import cross_site
from maag.server.web.signin import SignIn, json_error
from maag.server.web.worker import Processing

if TYPE_CHECKING:
    from maag.server.net.model import ServerConfig
    from maag.server.storage.base import AsyncStorage
    from maag.server.storage.submissions import Version

__all__ = ["UploadConfig", "Submissions"]

LOG = logging.getLogger(__name__)
MULTIPART_SLACK = 64 * 1024
"""What a multipart form may add around the package (boundaries, headers)."""
LOG_FILE_CAP = 64 * 1024


@dataclass(frozen=True, slots=True)
class UploadConfig:
    max_bytes: int = 50 * 1000**2
    """The largest package accepted (--upload-max-size)."""
    per_hour: int = 10
    """Uploads a bot may make in an hour (--uploads-per-hour; 0: no limit)."""
    log_dir: Path | None = None
    """Where builds and smoke games write their logs (one folder per version); None: a
    temporary folder of the process."""
    host: Any = None
    """HostOptions for the sandbox (None: the defaults)."""
    session_s: float = 12 * 3600.0
    """How long a sign-in lasts."""


class _Rejected(Exception):
    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.extra = extra


class Submissions:
    """The upload routes, the sign-in, the bot's page and the processing queue of one web
    server. `storage` is the referee's, `server` its settings (game, time control),
    `throttle` the lobby's login throttle (`Lobby.auth_delay`)."""

    def __init__(self, storage: AsyncStorage, server: ServerConfig, throttle: Callable[[list[str]], float],
                 config: UploadConfig | None = None,
                 standings: Callable[[], Awaitable[dict[str, Any] | None]] | None = None) -> None:
        self.storage = storage
        self.config = config = config or UploadConfig()
        self.signin = SignIn(storage, throttle, config.session_s)
        self.work = Processing(storage, server, config.host, config.log_dir)
        self.page = BotPage(storage, self.signin, self.work,
                            {"max_bytes": config.max_bytes, "per_hour": config.per_hour}, standings)
        self._uploads: dict[str, collections.deque[float]] = {}

    def setup(self, app: web.Application) -> None:
        self.signin.setup(app)
        r = app.router
        r.add_get("/api/bots/{name}", self.page.handle)
        r.add_post("/api/bots/{name}/versions", self._upload)
        r.add_get("/api/bots/{name}/versions/{n}", self._version)
        r.add_get("/api/bots/{name}/versions/{n}/logs", self._logs)
        app.on_startup.append(self.work.startup)
        app.on_cleanup.append(self.work.cleanup)

    # -- uploads -------------------------------------------------------------------------
    def _rate_ok(self, bot: str, stored_last_hour: int) -> float | None:
        """None if `bot` may upload now, else the seconds until it may."""
        limit = self.config.per_hour
        if not limit:
            return None
        now = time.monotonic()
        q = self._uploads.setdefault(bot, collections.deque())
        while q and now - q[0] >= 3600.0:
            q.popleft()
        if len(q) < limit and stored_last_hour < limit:
            return None
        return max(1.0, 3600.0 - (now - q[0])) if len(q) >= limit else 3600.0

    async def _upload(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        auth = request.headers.get("Authorization", "")
        if auth:
            scheme, _, token = auth.partition(" ")
            who = await self.storage.bot_by_token(token.strip()) \
                if scheme.lower() == "bearer" and token.strip() else None
        else:
            if cross_site(request):
                return json_error(403, "cross-site upload refused")
            who = await self.signin.signed_in(request)
        if who != name:
            return await self.signin.fail(request, [f"bot {name}"],
                                          f"unknown or revoked token for bot {name!r}" if auth else
                                          f"sign in with {name!r}'s token, or send it as "
                                          "'Authorization: Bearer TOKEN'")
        stored = await asyncio.to_thread(self._stored_last_hour, name)
        wait = self._rate_ok(name, stored)
        if wait is not None:
            return web.json_response(
                {"error": f"{name} has made {self.config.per_hour} uploads in the last hour, the limit; "
                          f"try again in {int(wait)} s"}, status=429, headers={"Retry-After": str(int(wait))})
        self._uploads.setdefault(name, collections.deque()).append(time.monotonic())
        limit = self.config.max_bytes
        try:
            if request.content_length is not None and request.content_length > limit + MULTIPART_SLACK:
                raise _Rejected(413, f"package of {request.content_length} bytes, more than the limit of "
                                     f"{limit} bytes", limit=limit)
            data = await _read(request, limit)
            pkg = await asyncio.to_thread(_check, data, limit, self.config.host)
        except _Rejected as e:
            LOG.info("web: upload for %s rejected: %s", name, printable(str(e)))
            return json_error(e.status, printable(str(e)), **e.extra)
        from maag.server.hosting.api import submit

        v = await asyncio.to_thread(submit, self.work.store, name, data, pkg)
        self.work.enqueue(v.bot, v.version)
        LOG.info("web: %s stored (%d bytes) from %s; queued", v.label, v.size, request.remote)
        # The token decides whose version it is; a manifest naming another bot is most likely
        # a package sent under the wrong token, so the answer says so (it is stored all the same:
        # the manifest's name is the participant's label, not an identity).
        notes = [] if pkg.name == name else [
            f"the package's manifest names {pkg.name!r}, but it was sent with {name!r}'s token: "
            f"it is stored as a version of {name!r}"]
        return web.json_response({"version": printable_all(v.to_dict()),
                                  "poll": f"/api/bots/{name}/versions/{v.version}",
                                  "queued": self.work.queued, "warnings": notes}, status=202)

    def _stored_last_hour(self, bot: str) -> int:
        since = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)).isoformat(timespec="milliseconds")
        return sum(1 for v in self.work.store.versions(bot) if v.created >= since)

    # -- versions ------------------------------------------------------------------------
    async def _version_of(self, request: web.Request) -> Version:
        name = request.match_info["name"]
        try:
            n = int(request.match_info["n"])
        except ValueError:
            raise web.HTTPBadRequest(text="a version is a number") from None
        v = await asyncio.to_thread(self.work.store.get, name, n)
        if v is None:
            raise web.HTTPNotFound(text=f"no version {n} of {name!r}")
        return v

    async def _version(self, request: web.Request) -> web.Response:
        v = await self._version_of(request)
        owner = await self.signin.signed_in(request) == v.bot or await self.signin.bearer(request) == v.bot
        return web.json_response(version_dict(v, owner))

    async def _logs(self, request: web.Request) -> web.Response:
        v = await self._version_of(request)
        if await self.signin.signed_in(request) != v.bot and await self.signin.bearer(request) != v.bot:
            return json_error(403, "the logs are the owner's: sign in with the bot's token")
        folder = self.work.version_log_dir(v.bot, v.version)

        def read() -> list[dict[str, Any]]:
            out = []
            for p in sorted(folder.glob("*.log")) if folder.is_dir() else []:
                size = p.stat().st_size
                with open(p, "rb") as f:
                    f.seek(max(0, size - LOG_FILE_CAP))
                    text = f.read().decode(errors="replace")
                out.append({"file": p.name, "size": size, "text": printable(text),
                            "truncated": size > LOG_FILE_CAP})
            return out

        return web.json_response({"bot": v.bot, "version": v.version,
                                  "build_log": None if v.build_log is None else printable(v.build_log),
                                  "files": await asyncio.to_thread(read)})


async def _read(request: web.Request, limit: int) -> bytes:
    """The package: the raw body, or a multipart form's `package` (or `file`) field; never
    more than `limit` bytes held."""
    async def take(read: Any) -> bytes:
        buf = bytearray()
        while True:
            chunk = await read(65536)
            if not chunk:
                return bytes(buf)
            buf += chunk
            if len(buf) > limit:
                raise _Rejected(413, f"package larger than the limit of {limit} bytes", limit=limit)

    if request.content_type.startswith("multipart/"):
        reader = await request.multipart()
        while True:
            part = await reader.next()
            if part is None:
                raise _Rejected(400, "the form has no file field 'package'")
            if getattr(part, "name", None) in ("package", "file"):
                return await take(part.read_chunk)  # type: ignore[union-attr]
            await part.release()
    return await take(request.content.read)


def _check(data: bytes, max_bytes: int, host: Any = None) -> Any:
    """Every check `maag bot submit` makes (manifest, archive safety, size, the cores it asks
    for against `host`'s HostOptions): the BotPackage, or _Rejected 400 with the reason."""
    from maag.server.hosting.api import HostOptions, SubmissionRejected, pack

    if data[:2] == b"PK":
        suffix = ".zip"
    elif data[:2] == b"\x1f\x8b":
        suffix = ".tar.gz"
    else:
        raise _Rejected(400, "not a bot package: send a .tar.gz or .zip of the package's folder")
    with tempfile.TemporaryDirectory(prefix="maag-upload-") as tmp:
        path = Path(tmp) / f"package{suffix}"
        path.write_bytes(data)
        try:
            _, pkg = pack(path, max_bytes, host or HostOptions())
        except SubmissionRejected as e:
            raise _Rejected(400, str(e).replace(tmp + os.sep, "").replace(tmp, "")) from None
    return pkg
