"""A hosted bot's page (`GET /api/bots/NAME`): its versions (status, reason, report), recent
games with verdicts and replay ids, its rating history, and its row of the standings as its
Elo (one figure for a bot everywhere); for the owner also the build logs and each game's log
tail. Every participant's text in it is escaped here (maag.server.printable)."""

from __future__ import annotations

import collections
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web
from maag.server.printable import printable, printable_all
from maag.server.web.signin import SignIn, json_error
from maag.server.web.worker import Processing
from maag.stats.live import LiveRatings

if TYPE_CHECKING:
    from maag.server.storage.base import AsyncStorage, GameRecord, Storage
    from maag.server.storage.submissions import Version

__all__ = ["BotPage", "is_validation", "owner_seats", "version_dict"]

RECENT_GAMES = 30
UNRATED = ("validate:", "web:")
"""Match ids left out of the rating history: smoke games of uploads, people's games."""
HOSTS_KEPT = 2000  # finished games' `host` parts cached


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


def version_dict(v: Version, owner: bool) -> dict[str, Any]:
    """A version as the API shows it (its logs and their address for the owner)."""
    # The reason, report, manifest (its notes) and build log are a participant's text.
    d: dict[str, Any] = printable_all(v.to_dict(logs=owner))
    d["url"] = f"/api/bots/{v.bot}/versions/{v.version}"
    if owner:
        d["logs_url"] = f"/api/bots/{v.bot}/versions/{v.version}/logs"
    return d


class BotPage:
    """`GET /api/bots/NAME`."""

    def __init__(self, storage: AsyncStorage, signin: SignIn, work: Processing, limits: dict[str, int],
                 standings: Callable[[], Awaitable[dict[str, Any] | None]] | None = None) -> None:
        self.storage = storage
        self.signin = signin
        self.work = work
        self.limits = limits
        """The upload limits the page states (max_bytes, per_hour)."""
        self.standings = standings
        """The standings /api/standings serves: a bot's page shows its row of them as its Elo."""
        self._hosts: collections.OrderedDict[int, dict[str, Any]] = collections.OrderedDict()

    async def handle(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        owner = await self.signin.signed_in(request) == name
        page = await self.storage.read(self._page, name, owner)
        if page is None:
            return json_error(404, f"no bot {name!r}")
        # Its Elo is the standings' (one figure for a bot everywhere); the history's online
        # steps are the trend between the standings' fits.
        table = await self.standings() if self.standings is not None else None
        rows = (table or {}).get("standings") or []
        page["standing"] = next((row for row in rows if row.get("bot") == name), None)
        return web.json_response(page)

    def _page(self, st: Storage, name: str, owner: bool) -> dict[str, Any] | None:
        registered = any(b.name == name for b in st.list_bots())
        versions = self.work.store.versions(name)
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
            host = self._host_of(st, g) if owner else None
            seats = owner_seats(g, name, None if host is None else {"host": host})
            d["bot_seats"] = [i + 1 for i in seats]
            if host is not None:
                tails = host.get("log_tail") or []
                # A bot's own output, shown as text: its control and bidi characters escaped
                # here, once for every page (maag.server.printable).
                d["log_tails"] = {str(i + 1): printable(tails[i]) for i in seats
                                  if i < len(tails) and tails[i] is not None}
            recent.append(d)
        processing = self.work.processing
        return {"bot": name, "registered": registered, "owner": owner,
                "processing": processing if processing and processing.startswith(name + "@") else None,
                "limits": dict(self.limits),
                "versions": [version_dict(v, owner) for v in reversed(versions)],
                "games": recent, "history": _history(every, name)}

    def _host_of(self, st: Storage, g: GameRecord) -> dict[str, Any]:
        """A stored game's `host` part (sandboxed seats, log tails), kept once it is over."""
        got = self._hosts.get(g.id)
        if got is None:
            rp = st.get_replay(g.id) if g.status != "running" else None
            got = dict((rp or {}).get("host") or {})
            if rp is not None:
                self._hosts[g.id] = got
                while len(self._hosts) > HOSTS_KEPT:
                    self._hosts.popitem(last=False)
        return got


def _history(every: list[GameRecord], name: str) -> list[dict[str, Any]]:
    """The rating history: after each of the bot's finished games (its smoke games left out),
    oldest first, its running score and its Elo as the games came, an online Elo over every
    stored game between bots (each name, NAME@VERSION included, from 0)."""
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
    return history
