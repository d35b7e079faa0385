"""The web server beside a referee (`maag serve --web`, `maag ladder --web`): aiohttp, one
page of plain JavaScript modules (static/, no build step, nothing from elsewhere), JSON
over HTTP for stored games, WebSockets for what is live.

Routes:

    GET  /                          the page (static/index.html); its views are #/ (games and
                                    standings), #/game/ID, #/replay/ID, #/play, #/people
    GET  /static/...                its modules and style
    GET  /ws/lobby                  pushes {"type": "lobby", games, finished, standings}
    GET  /ws/game/ID                pushes a running game's spectator snapshots (live.py)
    GET  /ws/play?token=T           a person's seat (play.py); the token comes from POST /api/play
    POST /api/play                  {opponent, seat, experience} -> {token, seat}
    GET  /api/games                 the last stored games
    GET  /api/replay/ID             a stored game: seats, tags, public actions (with `text`, each
                                    in the game's words, where it has them), values, layout
    GET  /api/replay/ID/at/N        the position after N actions as JSON: the spectator's view,
                                    or with `reveal` the full state (as `maag replay ID --at N
                                    --json` prints it) of a finished game
    GET  /api/layout/GAME?config=C  the board's layout of a configuration (JSON), for drawing
    GET  /api/catalog/GAME          the game's fixed display data (the card game's card table),
                                    fetched once by its drawing module, never sent per frame
    GET  /api/people                people's results by stated experience (people.py)
    GET  /api/standings             the standings (the ladder's, or of every stored game)
    ...  /api/session, /api/bots/NAME[/versions[/N[/logs]]]: hosted bots' uploads and pages
                                    (uploads.py)

Every stored game shown is re-simulated by the referee's replay module
(maag.server.referee.replay); nothing here knows a game's rules.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import WSCloseCode, WSMsgType, web
from maag.server.net.server import RefereeServer
from maag.server.printable import printable_all
from maag.server.referee.clock import TimeControl
from maag.server.referee.replay import ReplayError, initial_state, state_at
from maag.server.referee.spectator import public_value, public_view
from maag.server.web.govern import Governing
from maag.server.web.live import LiveGames, layout_of
from maag.server.web.people import people_summary
from maag.server.web.play import PLAY_MATCH, PlayError, Seats
from maag.server.web.uploads import Submissions, UploadConfig

__all__ = ["WebConfig", "WebServer", "STATIC"]

LOG = logging.getLogger(__name__)
STATIC = Path(__file__).resolve().parent / "static"
Standings = Callable[[], Awaitable[dict[str, Any] | None]]


@dataclass(frozen=True, slots=True)
class WebConfig:
    host: str = "127.0.0.1"
    port: int = 8080
    """0: any free port (see WebServer.port)."""
    reveal: bool = False
    """Show finished games' hidden parts (hands, decks) in replays: the full state."""
    human_tc: TimeControl = field(default_factory=lambda: TimeControl.parse("2m,bank=5m"))
    """A person's seat's time control (both seats of a person's game play under it)."""
    agent_ms: float | None = 1000.0
    """The most a bundled agent thinks per turn against a person (None: what the clock allows)."""
    max_sessions: int = 8
    """People playing at once."""
    max_per_address: int = 2
    max_rate: int = 20
    """Messages per second from one page (and burst)."""
    max_spectators: int = 1000
    """WebSockets of spectators at once."""
    interval: float = 0.25
    """Seconds between two pushes of one game (changes in between are sent together)."""
    uploads: UploadConfig = field(default_factory=UploadConfig)
    """Hosted bots' uploads and pages (uploads.py)."""


class WebServer:
    """The web view of one referee server. `await start()`, `await stop()`."""

    def __init__(self, referee: RefereeServer, config: WebConfig, standings: Standings | None = None) -> None:
        self.referee = referee
        self.config = config
        self.port = config.port
        self._standings = standings or self._stored_standings
        self.live = LiveGames(referee, self._standings_json, self._finished, config.interval)
        self.seats = Seats(referee, human_tc=config.human_tc, agent_ms=config.agent_ms,
                           max_sessions=config.max_sessions,
                           max_per_address=config.max_per_address, max_rate=config.max_rate)
        self._replays: OrderedDict[int, dict[str, Any]] = OrderedDict()
        self._simulating = asyncio.Semaphore(2)
        """Re-simulations of stored games at once (the rest wait): pages cannot take the
        referee's cores, however fast a slider is dragged."""
        self._runner: web.AppRunner | None = None
        self._sockets: weakref.WeakSet[web.WebSocketResponse] = weakref.WeakSet()
        """Every open WebSocket: closed when the server stops (a page left open would
        otherwise hold the stop until aiohttp's own time limit, a minute)."""
        self.app = self._make_app()

    def _make_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024)
        app.on_shutdown.append(self._close_sockets)
        r = app.router
        r.add_get("/", self._index)
        r.add_static("/static", STATIC, append_version=False)
        r.add_get("/ws/lobby", self._ws_lobby)
        r.add_get("/ws/game/{gid}", self._ws_game)
        r.add_get("/ws/play", self._ws_play)
        r.add_post("/api/play", self._play)
        r.add_get("/api/games", self._games)
        r.add_get("/api/replay/{gid}", self._replay)
        r.add_get("/api/replay/{gid}/at/{ply}", self._replay_at)
        r.add_get("/api/layout/{game}", self._layout)
        r.add_get("/api/catalog/{game}", self._catalog)
        r.add_get("/api/people", self._people)
        r.add_get("/api/standings", self._standings_route)
        # Wrong tokens on the web wait as failed logins do: the lobby's one throttle.
        self.submissions = Submissions(self.referee.storage, self.referee.config,
                                       self.referee.lobby.auth_delay, self.config.uploads,
                                       self._standings_json)
        self.submissions.setup(app)  # /api/session, /api/bots/...: uploads and the bots' pages
        self.governing = Governing(self.referee.storage, self.referee.lobby.auth_delay)
        self.governing.setup(app)  # /api/host/session, void, pardon, /api/rulings: the host's rulings
        return app

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.config.host, self.config.port)
        await site.start()
        if self._runner.addresses:  # (port 0: the one the system chose)
            self.port = int(self._runner.addresses[0][1])
        LOG.info("web view on http://%s:%d/", self.config.host, self.port)

    async def stop(self) -> None:
        self.live.close()
        self.seats.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- data -------------------------------------------------------------------------
    async def _stored_standings(self) -> dict[str, Any] | None:
        """Standings over the stored finished games between bots (people's games left out)."""
        from maag.server.compete.formats import rate

        games = await self.referee.storage.list_games(status="finished", limit=10_000)

        def compute() -> dict[str, Any] | None:
            outcomes = [(g.seats[0], g.seats[1], {0: 1.0, 1: 0.0, -1: 0.5}[g.winner])
                        for g in games
                        if g.winner is not None and g.match_id != PLAY_MATCH
                        and not (g.match_id or "").startswith("validate:")]  # uploads' smoke games
            if not outcomes:
                return None
            names = sorted({x for o in outcomes for x in o[:2]})
            return rate("stored games", "all", names, outcomes).summary()

        return await asyncio.to_thread(compute)

    async def _standings_json(self) -> dict[str, Any] | None:
        try:
            return await self._standings()
        except Exception:
            LOG.exception("standings could not be computed")
            return None

    async def _finished(self) -> list[dict[str, Any]]:
        rows = await self.referee.storage.list_games(None, None, 20)
        return [{"game_id": g.id, "game": g.game, "seats": list(g.seats), "status": g.status,
                 "winner": g.winner, "reason": g.reason, "plies": g.plies,
                 "verdict": printable_all(g.verdict)} for g in rows  # its detail may quote a bot
                if g.status != "running"]

    async def _load(self, gid: int) -> dict[str, Any] | None:
        rp = self._replays.get(gid)
        if rp is None:
            rp = await self.referee.storage.get_replay(gid)
            if rp is None:
                return None
            self._replays[gid] = rp
            while len(self._replays) > 64:
                self._replays.popitem(last=False)
        return rp

    # -- pages and JSON ---------------------------------------------------------------
    async def _index(self, _: web.Request) -> web.FileResponse:
        return web.FileResponse(STATIC / "index.html")

    async def _games(self, _: web.Request) -> web.Response:
        return web.json_response({"games": await self._finished()})

    async def _standings_route(self, _: web.Request) -> web.Response:
        return web.json_response({"standings": await self._standings_json()})

    async def _people(self, _: web.Request) -> web.Response:
        return web.json_response(await self.referee.storage.read(people_summary))

    async def _layout(self, request: web.Request) -> web.Response:
        from maag.engine import Game

        try:
            game = Game(request.match_info["game"], json.loads(request.query.get("config", "{}")))
        except Exception as e:  # an unknown game or a bad configuration
            raise web.HTTPBadRequest(text=str(e)) from None
        return web.json_response(layout_of(game.name, game.config))

    async def _catalog(self, request: web.Request) -> web.Response:
        from maag.engine import registry

        try:
            fn = registry.get(request.match_info["game"]).catalog
        except ValueError as e:
            raise web.HTTPNotFound(text=str(e)) from None
        if fn is None:
            raise web.HTTPNotFound(text=f"{request.match_info['game']} has no catalog")
        return web.json_response(fn())

    def _gid(self, request: web.Request) -> int:
        try:
            return int(request.match_info["gid"])
        except ValueError:
            raise web.HTTPBadRequest(text="a game id is a number") from None

    async def _replay(self, request: web.Request) -> web.Response:
        gid = self._gid(request)
        rp = await self._load(gid)
        if rp is None:
            raise web.HTTPNotFound(text=f"no stored game {gid}")
        spec = initial_state(rp).game.spec
        texts: list[str] = []  # each public action in the game's words, read in its position
        describe = spec.describe

        def values() -> list[list[Any]]:
            nonlocal describe
            st = initial_state(rp)
            out: list[list[Any]] = [[0, public_value(st)]]
            for i, e in enumerate(rp["actions"]):
                if describe is not None:
                    try:
                        texts.append(describe(st.to_json(), spec.public_action(e["action"])))
                    except Exception:  # the page describes the actions itself
                        LOG.warning("%s's describe failed on game %d's action %d", spec.name, gid, i,
                                    exc_info=True)
                        describe = None
                        texts.clear()
                st.apply(e["action"])
                if "hash" in e or st.is_terminal:
                    out.append([i + 1, public_value(st) if not st.is_terminal else None])
            return out

        try:
            async with self._simulating:
                vals = await asyncio.to_thread(values)
        except Exception as e:  # a replay that does not re-simulate
            raise web.HTTPUnprocessableEntity(text=f"game {gid} does not re-simulate: {e}") from None
        return web.json_response({
            # The tags and the result's verdict detail can quote what a bot sent: escaped.
            "game_id": gid, "game": rp["game"], "config": rp["config"],
            "tags": printable_all(rp.get("tags", {})),
            "seats": [rp.get("tags", {}).get("Seat1"), rp.get("tags", {}).get("Seat2")],
            "actions": [{"seat": e["seat"] + 1, "action": spec.public_action(e["action"]),
                         "auto": bool(e.get("auto")), **({"text": texts[i]} if texts else {})}
                        for i, e in enumerate(rp["actions"])],
            "plies": len(rp["actions"]), "result": printable_all(rp.get("result")), "values": vals,
            # What the host measured (CPU per turn, overload); the bots' log tails are the owners' only.
            "host": {k: v for k, v in (rp.get("host") or {}).items() if k != "log_tail"} or None,
            "value_scale": spec.value_scale, "layout": layout_of(rp["game"], rp["config"]),
            "reveal": self.config.reveal and rp.get("result") is not None})

    async def _replay_at(self, request: web.Request) -> web.Response:
        gid = self._gid(request)
        try:
            ply = int(request.match_info["ply"])
        except ValueError:
            raise web.HTTPBadRequest(text="a position is a number of actions") from None
        rp = await self._load(gid)
        if rp is None:
            raise web.HTTPNotFound(text=f"no stored game {gid}")
        try:
            async with self._simulating:
                st = await asyncio.to_thread(state_at, rp, ply)
        except (ReplayError, ValueError) as e:
            raise web.HTTPBadRequest(text=str(e)) from None
        full = self.config.reveal and rp.get("result") is not None
        return web.json_response(st.to_json() if full else public_view(st))

    # -- WebSockets --------------------------------------------------------------------
    async def _close_sockets(self, _: web.Application) -> None:
        await asyncio.gather(*(ws.close(code=WSCloseCode.GOING_AWAY, message=b"the server is stopping")
                               for ws in list(self._sockets)), return_exceptions=True)

    async def _open_ws(self, request: web.Request) -> web.WebSocketResponse:
        if self.live.spectators >= self.config.max_spectators:
            raise web.HTTPServiceUnavailable(text="too many spectators; try again later")
        ws = web.WebSocketResponse(heartbeat=30.0, max_msg_size=16 * 1024)
        await ws.prepare(request)
        self._sockets.add(ws)
        return ws

    async def _ws_lobby(self, request: web.Request) -> web.WebSocketResponse:
        ws = await self._open_ws(request)
        try:
            await self.live.subscribe_lobby(ws)
            async for _ in ws:  # spectators have nothing to say
                pass
        finally:
            self.live.unsubscribe(ws)
        return ws

    async def _ws_game(self, request: web.Request) -> web.WebSocketResponse:
        ws = await self._open_ws(request)
        gid = request.match_info["gid"]
        try:
            if not await self.live.subscribe_game(ws, gid):
                await ws.send_str(json.dumps({"type": "gone", "game_id": gid}))
                await ws.close()
                return ws
            async for _ in ws:
                pass
        finally:
            self.live.unsubscribe(ws)
        return ws

    async def _play(self, request: web.Request) -> web.Response:
        try:
            form = await request.json()
        except ValueError:
            return web.json_response({"error": "the form must be JSON"}, status=400)
        if not isinstance(form, dict):
            return web.json_response({"error": "the form must be a JSON map"}, status=400)
        try:
            hs = await self.seats.start_play(form, request.remote or "?")
        except PlayError as e:
            return web.json_response({"error": str(e)}, status=429 if "limit" in str(e) or "at most" in str(e)
                                     else 400)
        return web.json_response({"token": hs.token, "seat": hs.seat, "opponent": hs.opponent})

    async def _ws_play(self, request: web.Request) -> web.WebSocketResponse:
        hs = self.seats.seats.get(request.query.get("token", ""))
        if hs is None:
            raise web.HTTPForbidden(text="unknown or expired play token")
        ws = web.WebSocketResponse(heartbeat=30.0, max_msg_size=64 * 1024)
        await ws.prepare(request)
        self._sockets.add(ws)
        old, hs.ws = hs.ws, None
        if old is not None and not old.closed:
            await old.close(message=b"the seat was opened in another page")
        hello = {"type": "seat", "seat": hs.seat, "opponent": hs.opponent, "bot": hs.bot}
        await ws.send_str(json.dumps(hello))
        sent = 0
        while sent < len(hs.backlog):  # the game so far, in order, including what comes meanwhile
            await ws.send_str(hs.backlog[sent])
            sent += 1
        hs.ws = ws  # (no await since the loop's last test: nothing was missed)
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                await ws.send_str(json.dumps({"type": "error", "message": "text frames only"}))
                continue
            why = hs.from_page(msg.data, time.monotonic())
            if why is not None:
                await ws.send_str(json.dumps({"type": "error", "message": why}))
        if hs.ws is ws:
            hs.ws = None
        return ws
