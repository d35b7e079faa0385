"""Hosted bots over HTTP (issue 43): a participant uploads a new version of their bot with
the bot's own token, and the bot's page shows its versions, reports, games and score history;
the owner, signed in with the token (a session cookie, never the token in a URL), also sees
the build logs and the bot's logs for each game.

Routes (registered by WebServer through `Submissions.setup`):

    POST   /api/session                {token} -> {bot}; sets the HttpOnly, SameSite=Strict
                                       cookie `maag_session` (a random id mapped here to the bot)
    GET    /api/session                {bot}: who this page is signed in as (null: nobody), or
                                       whose token `Authorization: Bearer T` is
    DELETE /api/session                sign out
    GET    /api/bots/NAME              versions (status, reason, report), recent games with
                                       verdicts and replay ids, the score history; for the
                                       owner also build logs and each game's log tail
    POST   /api/bots/NAME/versions     an upload: the package as the raw body or as the file
                                       field `package` of a multipart form; token in
                                       `Authorization: Bearer T` or the session cookie -> 202
                                       {version, poll} (status pending)
    GET    /api/bots/NAME/versions/N   one version (with its build log for the owner)
    GET    /api/bots/NAME/versions/N/logs   the owner's: the logs its build and smoke games wrote

An upload is authenticated before its body is read; a wrong, revoked or other bot's token is
answered 401 after a delay that doubles with each failure from the address or for the bot
(the referee's login throttle: --auth-delay), storing nothing. Then the per-bot rate limit
(429), the size limit, enforced while reading (413; nothing beyond the limit is buffered), and
every check of `maag bot submit` (manifest, archive safety: 400 with the reason). A stored
version is built and validated by `maag.server.hosting.api.process` in this process,
one at a time in upload order, under the server's game, options and time control.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import secrets
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web
from maag.server.printable import printable, printable_all
from maag.server.storage.base import hash_token
from maag.stats.live import LiveRatings

if TYPE_CHECKING:
    from maag.server.net.server import RefereeServer
    from maag.server.storage.base import GameRecord
    from maag.server.storage.submissions import SubmissionStore, Version

__all__ = ["UploadConfig", "Submissions", "COOKIE", "owner_seats"]

LOG = logging.getLogger(__name__)
COOKIE = "maag_session"
MULTIPART_SLACK = 64 * 1024
"""What a multipart form may add around the package (boundaries, headers)."""
RECENT_GAMES = 30
UNRATED = ("validate:", "web:")
"""Match ids left out of the rating history: smoke games of uploads, people's games."""
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


def _error(status: int, message: str, **extra: Any) -> web.Response:
    return web.json_response({"error": message, **extra}, status=status)


def is_validation(g: GameRecord, bot: str) -> bool:
    return (g.match_id or "").startswith(f"validate:{bot}@")


def _seat_is(seat: str, bot: str) -> bool:
    return seat == bot or seat.startswith(bot + "@")


def owner_seats(g: GameRecord, bot: str, replay: dict[str, Any] | None) -> list[int]:
    """The seats (0, 1) `bot` played in game `g`: under its name (or NAME@VERSION), or in
    its own smoke games the sandboxed seats."""
    if is_validation(g, bot):
        boxed = ((replay or {}).get("host") or {}).get("sandboxed") or [s != "random" for s in g.seats]
        return [i for i in (0, 1) if boxed[i]]
    return [i for i in (0, 1) if _seat_is(g.seats[i], bot)]


class _Throttle:
    """Failed sign-ins and uploads: the referee's login throttle (auth_delay_ms doubling per
    failure within auth_window_s, at most auth_delay_max_ms), kept per address and per bot."""

    def __init__(self, delay_ms: float, max_ms: float, window_s: float) -> None:
        self.delay_ms, self.max_ms, self.window_s = delay_ms, max_ms, window_s
        self.failures: dict[str, tuple[int, float]] = {}

    def fail(self, keys: list[str]) -> float:
        now = time.monotonic()
        worst = 0
        for k in keys:
            n, last = self.failures.get(k, (0, now))
            n = 1 if now - last > self.window_s else n + 1
            self.failures[k] = (n, now)
            worst = max(worst, n)
        if len(self.failures) > 100_000:
            for k, _ in sorted(self.failures.items(), key=lambda kv: kv[1][1])[:50_000]:
                del self.failures[k]
        return min(self.max_ms, self.delay_ms * 2 ** min(worst - 1, 30)) / 1000


@dataclass(slots=True)
class _Session:
    bot: str
    token_hash: str
    expires: float


class Submissions:
    """The upload routes and the processing queue of one web server."""

    def __init__(self, referee: RefereeServer, config: UploadConfig | None = None,
                 standings: Callable[[], Awaitable[dict[str, Any] | None]] | None = None) -> None:
        self.referee = referee
        self.config = config or UploadConfig()
        self.standings = standings
        """The standings /api/standings serves: a bot's page shows its row of them as its Elo."""
        rc = referee.config
        self.throttle = _Throttle(rc.auth_delay_ms, rc.auth_delay_max_ms, rc.auth_window_s)
        self.sessions: dict[str, _Session] = {}
        self._hosts: collections.OrderedDict[int, dict[str, Any]] = collections.OrderedDict()
        self._uploads: dict[str, collections.deque[float]] = {}
        self._store: SubmissionStore | None = None
        self._queue: asyncio.Queue[tuple[str, int]] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.log_root = self.config.log_dir
        self.processing: str | None = None
        """The version being built or validated now (NAME@N), if any."""

    # -- set-up --------------------------------------------------------------------------
    def setup(self, app: web.Application) -> None:
        r = app.router
        r.add_post("/api/session", self._sign_in)
        r.add_get("/api/session", self._whoami)
        r.add_delete("/api/session", self._sign_out)
        r.add_get("/api/bots/{name}", self._bot)
        r.add_post("/api/bots/{name}/versions", self._upload)
        r.add_get("/api/bots/{name}/versions/{n}", self._version)
        r.add_get("/api/bots/{name}/versions/{n}/logs", self._logs)
        app.on_startup.append(self._startup)
        app.on_cleanup.append(self._cleanup)

    @property
    def db_url(self) -> str:
        return self.referee.storage.storage.url

    async def _startup(self, _: web.Application) -> None:
        from maag.server.storage.submissions import open_submission_store

        if self.log_root is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="maag-uploads-")
            self.log_root = Path(self._tmp.name)
        try:
            self._store = store = await asyncio.to_thread(open_submission_store, self.db_url)
        except Exception:  # the rest of the view works; uploads and bots' pages answer 503
            LOG.exception("web: the submissions tables could not be opened; uploads are off")
            return
        # Versions a stopped web server left building or validating are processed again.
        n = await asyncio.to_thread(store.recover)
        if n:
            LOG.warning("%d version(s) left building or validating by a stopped process: processed again", n)
        for v in await asyncio.to_thread(store.versions, None, "pending"):
            self._queue.put_nowait((v.bot, v.version))
        self._worker = asyncio.ensure_future(self._work())

    async def _cleanup(self, _: web.Application) -> None:
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

    @property
    def store(self) -> SubmissionStore:
        if self._store is None:
            raise web.HTTPServiceUnavailable(text="the web server is starting")
        return self._store

    # -- processing ----------------------------------------------------------------------
    def version_log_dir(self, bot: str, version: int) -> Path:
        assert self.log_root is not None
        from maag.server.hosting.api import safe_name

        return self.log_root / safe_name(bot) / f"v{version}"

    async def _work(self) -> None:
        from maag.server.hosting.api import HostOptions, process

        cfg = self.referee.config
        options = self.config.host or HostOptions()
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

    # -- who is asking -------------------------------------------------------------------
    def _session(self, request: web.Request) -> _Session | None:
        sid = request.cookies.get(COOKIE)
        s = self.sessions.get(sid or "")
        if s is None:
            return None
        if s.expires < time.monotonic():
            del self.sessions[sid or ""]
            return None
        return s

    async def _signed_in(self, request: web.Request) -> str | None:
        """The bot this request's session cookie is signed in as, while its token stands."""
        s = self._session(request)
        if s is None:
            return None
        if not await self.referee.storage.valid_token_hashes([s.token_hash]):
            self.sessions = {k: v for k, v in self.sessions.items() if v.token_hash != s.token_hash}
            return None
        return s.bot

    async def _fail(self, request: web.Request, keys: list[str], message: str) -> web.Response:
        delay = self.throttle.fail([f"address {request.remote or '?'}", *keys])
        LOG.info("web: failed sign-in or upload from %s (%s); answered after %.2f s", request.remote,
                 ", ".join(keys) or "no bot", delay)
        if delay > 0:
            await asyncio.sleep(delay)
        return _error(401, message)

    @staticmethod
    def _cross_site(request: web.Request) -> bool:
        """A browser's request from another site (the cookie is SameSite=Strict already; this
        also stops signing a visitor in from elsewhere). Behind a proxy that rewrites Host,
        X-Forwarded-Host names the site."""
        origin = request.headers.get("Origin")
        if not origin or origin == "null":
            return origin == "null"
        forwarded = request.headers.get("X-Forwarded-Host", "")
        hosts = {request.host, *(h.strip() for h in forwarded.split(",") if h.strip())}
        return origin.split("://", 1)[-1].rstrip("/") not in hosts

    # -- sessions ------------------------------------------------------------------------
    async def _sign_in(self, request: web.Request) -> web.Response:
        if self._cross_site(request):
            return _error(403, "cross-site sign-in refused")
        try:
            form = await request.json()
            token = str(form["token"]).strip()
        except (ValueError, KeyError, TypeError):
            return _error(400, "send {\"token\": \"...\"} as JSON")
        bot = await self.referee.storage.bot_by_token(token) if token else None
        if bot is None:
            return await self._fail(request, [], "unknown or revoked token")
        sid = secrets.token_urlsafe(32)
        if len(self.sessions) > 10_000:
            now = time.monotonic()
            self.sessions = {k: v for k, v in self.sessions.items() if v.expires > now}
        self.sessions[sid] = _Session(bot, hash_token(token), time.monotonic() + self.config.session_s)
        resp = web.json_response({"bot": bot})
        resp.set_cookie(COOKIE, sid, httponly=True, samesite="Strict", path="/", secure=request.secure,
                        max_age=int(self.config.session_s))
        return resp

    async def _whoami(self, request: web.Request) -> web.Response:
        if "Authorization" in request.headers:  # whose token is this (`maag bot upload`)
            who = await self._bearer(request)
            return web.json_response({"bot": who}) if who else _error(401, "unknown or revoked token")
        return web.json_response({"bot": await self._signed_in(request)})

    async def _sign_out(self, request: web.Request) -> web.Response:
        sid = request.cookies.get(COOKIE)
        if sid:
            self.sessions.pop(sid, None)
        resp = web.json_response({"bot": None})
        resp.del_cookie(COOKIE, path="/")
        return resp

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
            who = await self.referee.storage.bot_by_token(token.strip()) \
                if scheme.lower() == "bearer" and token.strip() else None
        else:
            if self._cross_site(request):
                return _error(403, "cross-site upload refused")
            who = await self._signed_in(request)
        if who != name:
            return await self._fail(request, [f"bot {name}"],
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
            data = await self._read(request, limit)
            pkg = await asyncio.to_thread(_check, data, limit, self.config.host)
        except _Rejected as e:
            LOG.info("web: upload for %s rejected: %s", name, printable(str(e)))
            return _error(e.status, printable(str(e)), **e.extra)
        from maag.server.hosting.api import submit

        v = await asyncio.to_thread(submit, self.store, name, data, pkg)
        self._queue.put_nowait((v.bot, v.version))
        LOG.info("web: %s stored (%d bytes) from %s; queued", v.label, v.size, request.remote)
        # The token decides whose version it is; a manifest naming another bot is most likely
        # a package sent under the wrong token, so the answer says so (it is stored all the same:
        # the manifest's name is the participant's label, not an identity).
        notes = [] if pkg.name == name else [
            f"the package's manifest names {pkg.name!r}, but it was sent with {name!r}'s token: "
            f"it is stored as a version of {name!r}"]
        return web.json_response({"version": printable_all(v.to_dict()),
                                  "poll": f"/api/bots/{name}/versions/{v.version}",
                                  "queued": self._queue.qsize(), "warnings": notes}, status=202)

    def _stored_last_hour(self, bot: str) -> int:
        import datetime as dt

        since = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)).isoformat(timespec="milliseconds")
        return sum(1 for v in self.store.versions(bot) if v.created >= since)

    @staticmethod
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

    # -- the bot's page ------------------------------------------------------------------
    async def _bot(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        owner = await self._signed_in(request) == name
        page = await asyncio.to_thread(self._page, name, owner)
        if page is None:
            return _error(404, f"no bot {name!r}")
        # Its Elo is the standings' (one figure for a bot everywhere); the history's online
        # steps are the trend between the standings' fits.
        table = await self.standings() if self.standings is not None else None
        rows = (table or {}).get("standings") or []
        page["standing"] = next((row for row in rows if row.get("bot") == name), None)
        return web.json_response(page)

    def _page(self, name: str, owner: bool) -> dict[str, Any] | None:
        st = self.referee.storage.storage
        registered = any(b.name == name for b in st.list_bots())
        versions = self.store.versions(name)
        every = st.list_games(limit=20_000)
        mine = [g for g in every if any(_seat_is(s, name) for s in g.seats) or is_validation(g, name)]
        if not (registered or versions or mine):
            return None
        recent = []
        for g in mine[:RECENT_GAMES]:
            d: dict[str, Any] = {"game_id": g.id, "game": g.game, "seats": list(g.seats),
                                 "status": g.status, "winner": g.winner, "reason": g.reason, "plies": g.plies,
                                 "verdict": printable_all(g.verdict), "finished": g.finished,
                                 "match_id": g.match_id,
                                 "validation": is_validation(g, name)}
            host = self._host_of(g) if owner else None
            seats = owner_seats(g, name, None if host is None else {"host": host})
            d["bot_seats"] = [i + 1 for i in seats]
            if host is not None:
                tails = host.get("log_tail") or []
                # A bot's own output, shown as text: its control and bidi characters escaped
                # here, once for every page (maag.server.printable).
                d["log_tails"] = {str(i + 1): printable(tails[i]) for i in seats
                                  if i < len(tails) and tails[i] is not None}
            recent.append(d)
        # The rating history: after each of the bot's finished games (its smoke games left
        # out), oldest first, its running score and its Elo as the games came, an online Elo
        # over every stored game between bots (each name, NAME@VERSION included, from 0).
        history: list[dict[str, Any]] = []
        points = 0.0
        live = LiveRatings()  # the ladder's own online step (maag.stats.live), not a copy of it
        for g in reversed(every):
            if g.winner is None or g.status != "finished" or (g.match_id or "").startswith(UNRATED):
                continue
            a, b = g.seats
            s = 0.5 if g.winner == -1 else float(g.winner == 0)
            live.update(a, b, s)
            seats = owner_seats(g, name, None)
            if len(seats) != 1:
                continue
            i = seats[0]
            s = 0.5 if g.winner == -1 else float(g.winner == i)
            points += s
            history.append({"game_id": g.id, "finished": g.finished, "score": s, "as": g.seats[i],
                            "opponent": g.seats[1 - i], "elo": round(live.elo.get(g.seats[i], 0.0), 1),
                            "score_pct": round(100 * points / (len(history) + 1), 2)})
        return {"bot": name, "registered": registered, "owner": owner,
                "processing": self.processing if self.processing and self.processing.startswith(name + "@")
                else None,
                "limits": {"max_bytes": self.config.max_bytes, "per_hour": self.config.per_hour},
                "versions": [self._vdict(v, owner) for v in reversed(versions)],
                "games": recent, "history": history}

    def _host_of(self, g: GameRecord) -> dict[str, Any]:
        """A stored game's `host` part (sandboxed seats, log tails), kept once it is over."""
        got = self._hosts.get(g.id)
        if got is None:
            rp = self.referee.storage.storage.get_replay(g.id) if g.status != "running" else None
            got = dict((rp or {}).get("host") or {})
            if rp is not None:
                self._hosts[g.id] = got
                while len(self._hosts) > 2000:
                    self._hosts.popitem(last=False)
        return got

    def _vdict(self, v: Version, owner: bool) -> dict[str, Any]:
        # The reason, report, manifest (its notes) and build log are a participant's text.
        d: dict[str, Any] = printable_all(v.to_dict(logs=owner))
        d["url"] = f"/api/bots/{v.bot}/versions/{v.version}"
        if owner:
            d["logs_url"] = f"/api/bots/{v.bot}/versions/{v.version}/logs"
        return d

    async def _version_of(self, request: web.Request) -> Version:
        name = request.match_info["name"]
        try:
            n = int(request.match_info["n"])
        except ValueError:
            raise web.HTTPBadRequest(text="a version is a number") from None
        v = await asyncio.to_thread(self.store.get, name, n)
        if v is None:
            raise web.HTTPNotFound(text=f"no version {n} of {name!r}")
        return v

    async def _version(self, request: web.Request) -> web.Response:
        v = await self._version_of(request)
        owner = await self._signed_in(request) == v.bot or await self._bearer(request) == v.bot
        return web.json_response(self._vdict(v, owner))

    async def _bearer(self, request: web.Request) -> str | None:
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        who = await self.referee.storage.bot_by_token(token.strip())
        if who is None:
            await self._fail(request, [], "unknown or revoked token")
        return who

    async def _logs(self, request: web.Request) -> web.Response:
        v = await self._version_of(request)
        if await self._signed_in(request) != v.bot and await self._bearer(request) != v.bot:
            return _error(403, "the logs are the owner's: sign in with the bot's token")
        folder = self.version_log_dir(v.bot, v.version)

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
