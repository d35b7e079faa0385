"""Who is asking, for the web's hosted-bot routes: sign-in sessions (a random id in the
HttpOnly, SameSite=Strict cookie `maag_session`, mapped here to the bot and its token's hash,
never the token in a URL), a bot's token in `Authorization: Bearer T`, and failed attempts
answered after the lobby's login throttle (its delay doubling per failure from the address or
for the bot, --auth-delay).

Routes (registered by uploads.py's `Submissions.setup`):

    POST   /api/session                {token} -> {bot}; sets the cookie
    GET    /api/session                {bot}: who this page is signed in as (null: nobody), or
                                       whose token `Authorization: Bearer T` is
    DELETE /api/session                sign out
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp import web
from maag.server.storage.base import hash_token
from maag.server.web.origin import cross_site

if TYPE_CHECKING:
    from maag.server.storage.base import AsyncStorage

__all__ = ["COOKIE", "SignIn", "json_error"]

LOG = logging.getLogger(__name__)
COOKIE = "maag_session"
MAX_SESSIONS = 10_000  # past this, expired sessions are dropped at the next sign-in


def json_error(status: int, message: str, **extra: Any) -> web.Response:
    return web.json_response({"error": message, **extra}, status=status)


@dataclass(slots=True)
class _Session:
    bot: str
    token_hash: str
    expires: float


class SignIn:
    """The sign-in sessions of one web server, and its answer to a wrong token."""

    def __init__(self, storage: AsyncStorage, throttle: Callable[[list[str]], float],
                 session_s: float) -> None:
        self.storage = storage
        self.throttle = throttle
        """Record a failure under these keys; the seconds to wait before answering (the
        lobby's `auth_delay`: one throttle for logins and the web's tokens)."""
        self.session_s = session_s
        self.sessions: dict[str, _Session] = {}

    def setup(self, app: web.Application) -> None:
        r = app.router
        r.add_post("/api/session", self._sign_in)
        r.add_get("/api/session", self._whoami)
        r.add_delete("/api/session", self._sign_out)

    def _session(self, request: web.Request) -> _Session | None:
        sid = request.cookies.get(COOKIE)
        s = self.sessions.get(sid or "")
        if s is None:
            return None
        if s.expires < time.monotonic():
            del self.sessions[sid or ""]
            return None
        return s

    async def signed_in(self, request: web.Request) -> str | None:
        """The bot this request's session cookie is signed in as, while its token stands."""
        s = self._session(request)
        if s is None:
            return None
        if not await self.storage.valid_token_hashes([s.token_hash]):
            self.sessions = {k: v for k, v in self.sessions.items() if v.token_hash != s.token_hash}
            return None
        return s.bot

    async def bearer(self, request: web.Request) -> str | None:
        """The bot whose token `Authorization: Bearer T` is (None, throttled, if none's)."""
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        who = await self.storage.bot_by_token(token.strip())
        if who is None:
            await self.fail(request, [], "unknown or revoked token")
        return who

    async def fail(self, request: web.Request, keys: list[str], message: str) -> web.Response:
        """A 401 after the throttle's delay for the address and `keys`."""
        delay = self.throttle([f"address {request.remote or '?'}", *keys])
        LOG.info("web: failed sign-in or upload from %s (%s); answered after %.2f s", request.remote,
                 ", ".join(keys) or "no bot", delay)
        if delay > 0:
            await asyncio.sleep(delay)
        return json_error(401, message)

    async def _sign_in(self, request: web.Request) -> web.Response:
        if cross_site(request):
            return json_error(403, "cross-site sign-in refused")
        try:
            form = await request.json()
            token = str(form["token"]).strip()
        except (ValueError, KeyError, TypeError):
            return json_error(400, "send {\"token\": \"...\"} as JSON")
        bot = await self.storage.bot_by_token(token) if token else None
        if bot is None:
            return await self.fail(request, [], "unknown or revoked token")
        sid = secrets.token_urlsafe(32)
        if len(self.sessions) > MAX_SESSIONS:
            now = time.monotonic()
            self.sessions = {k: v for k, v in self.sessions.items() if v.expires > now}
        self.sessions[sid] = _Session(bot, hash_token(token), time.monotonic() + self.session_s)
        resp = web.json_response({"bot": bot})
        resp.set_cookie(COOKIE, sid, httponly=True, samesite="Strict", path="/", secure=request.secure,
                        max_age=int(self.session_s))
        return resp

    async def _whoami(self, request: web.Request) -> web.Response:
        if "Authorization" in request.headers:  # whose token is this (`maag bot upload`)
            who = await self.bearer(request)
            return web.json_response({"bot": who}) if who else json_error(401, "unknown or revoked token")
        return web.json_response({"bot": await self.signed_in(request)})

    async def _sign_out(self, request: web.Request) -> web.Response:
        sid = request.cookies.get(COOKIE)
        if sid:
            self.sessions.pop(sid, None)
        resp = web.json_response({"bot": None})
        resp.del_cookie(COOKIE, path="/")
        return resp
