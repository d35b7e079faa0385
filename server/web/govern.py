"""The host's rulings from the web view: void a game, pardon a bot (docs/web.md, "The host's
rulings"). What `maag game void` and `maag bot pardon` do on the command line, recorded the
same way (maag.server.storage.rulings) under the host account's name
(`maag host add NAME` makes one and prints its token).

    POST   /api/host/session        {"token": "..."}: sign in as a host (a session cookie)
    GET    /api/host/session        {"host": NAME or null}
    DELETE /api/host/session        sign out
    POST   /api/games/ID/void       {"why": "..."}: the ruling, or why it was refused
    POST   /api/bots/NAME/pardon    {"why": "..."}
    GET    /api/rulings[?bot=NAME]  every ruling, oldest first (public: who, when and why)

A host's session is its own cookie (`maag_host`, HttpOnly, SameSite=Strict), apart from a
bot owner's: signing in as one never makes a page the other. Each ruling request is checked
against the database (the account's token still stands), refused from another site, and a
wrong token is answered after the lobby's login throttle (its delay doubling per failure). A
running ladder reads the new ruling within seconds, as it does the command line's.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from maag.server.printable import printable_all
from maag.server.storage.base import AsyncStorage, Storage, StorageError, hash_token
from maag.server.storage.rulings import host_by_token, host_by_token_hash, list_rulings, pardon_bot, void_game
from maag.server.web.origin import cross_site
from maag.server.web.signin import json_error

__all__ = ["HOST_COOKIE", "Governing"]

LOG = logging.getLogger("maag.web")
HOST_COOKIE = "maag_host"


@dataclass(frozen=True, slots=True)
class _HostSession:
    host: str
    token_hash: str
    expires: float


class Governing:
    """The routes above over the referee's storage (rulings written in order with the games'
    writes, sign-ins and lists read beside them)."""

    def __init__(self, storage: AsyncStorage, throttle: Callable[[list[str]], float], *,
                 session_s: float = 8 * 3600) -> None:
        """`throttle`: the lobby's login throttle (`Lobby.auth_delay`): a wrong host token
        counts as a failed login of its address, as a bot's and an owner's do."""
        self.storage = storage
        self.throttle = throttle
        self.session_s = session_s
        self.sessions: dict[str, _HostSession] = {}

    def setup(self, app: web.Application) -> None:
        r = app.router
        r.add_post("/api/host/session", self._sign_in)
        r.add_get("/api/host/session", self._whoami)
        r.add_delete("/api/host/session", self._sign_out)
        r.add_post("/api/games/{gid}/void", self._void)
        r.add_post("/api/bots/{name}/pardon", self._pardon)
        r.add_get("/api/rulings", self._rulings)

    async def host(self, request: web.Request) -> str | None:
        """The host account this request's cookie is signed in as, while its token stands."""
        sid = request.cookies.get(HOST_COOKIE, "")
        s = self.sessions.get(sid)
        if s is None:
            return None
        if s.expires < time.monotonic():
            self.sessions.pop(sid, None)
            return None
        if await self.storage.read(host_by_token_hash, s.token_hash) != s.host:
            self.sessions = {k: v for k, v in self.sessions.items() if v.token_hash != s.token_hash}
            return None
        return s.host

    async def _sign_in(self, request: web.Request) -> web.Response:
        if cross_site(request):
            return json_error(403, "cross-site sign-in refused")
        try:
            form = await request.json()
            token = str(form["token"]).strip()
        except (ValueError, KeyError, TypeError):
            return json_error(400, "send {\"token\": \"...\"} as JSON")
        host = await self.storage.read(host_by_token, token) if token else None
        if host is None:
            delay = self.throttle([f"address {request.remote or '?'}", "host sign-in"])
            LOG.info("web: a wrong host token from %s; answered after %.2f s", request.remote, delay)
            await asyncio.sleep(delay)
            return json_error(401, "unknown token: a host's token comes from `maag host add NAME`")
        now = time.monotonic()
        if len(self.sessions) > 1000:
            self.sessions = {k: v for k, v in self.sessions.items() if v.expires > now}
        sid = secrets.token_urlsafe(32)
        self.sessions[sid] = _HostSession(host, hash_token(token), now + self.session_s)
        LOG.info("web: host %s signed in from %s", host, request.remote)
        resp = web.json_response({"host": host})
        resp.set_cookie(HOST_COOKIE, sid, httponly=True, samesite="Strict", path="/", secure=request.secure,
                        max_age=int(self.session_s))
        return resp

    async def _whoami(self, request: web.Request) -> web.Response:
        return web.json_response({"host": await self.host(request)})

    async def _sign_out(self, request: web.Request) -> web.Response:
        self.sessions.pop(request.cookies.get(HOST_COOKIE, ""), None)
        resp = web.json_response({"host": None})
        resp.del_cookie(HOST_COOKIE, path="/")
        return resp

    async def _ruling(self, request: web.Request, make: Callable[[Storage, str, str], Any]) -> web.Response:
        """Record one ruling by the signed-in host: its JSON, or why it was refused."""
        if cross_site(request):
            return json_error(403, "cross-site ruling refused")
        host = await self.host(request)
        if host is None:
            return json_error(403, "only a host rules: sign in on #/host with a token from "
                                   "`maag host add NAME`")
        try:
            why = str((await request.json())["why"])
        except (ValueError, KeyError, TypeError):
            return json_error(400, "send {\"why\": \"...\"} as JSON")
        try:
            ruling = await self.storage.apply(make, host, why)
        except StorageError as e:
            return json_error(409, str(e))
        LOG.info("web: %s", ruling.describe())
        return web.json_response(printable_all(ruling.to_dict()))

    async def _void(self, request: web.Request) -> web.Response:
        try:
            gid = int(request.match_info["gid"])
        except ValueError:
            return json_error(404, "no such game")
        return await self._ruling(request, lambda st, who, why: void_game(st, gid, who, why))

    async def _pardon(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        return await self._ruling(request, lambda st, who, why: pardon_bot(st, name, who, why))

    async def _rulings(self, request: web.Request) -> web.Response:
        bot = request.query.get("bot") or None
        rows = await self.storage.read(list_rulings, bot=bot)
        return web.json_response({"rulings": [printable_all(r.to_dict()) for r in rows]})
