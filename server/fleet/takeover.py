"""Surviving the loss of a referee in a fleet on one database: this referee's running games'
actions written to the database in small batches (`run`, every FLUSH_S, off the hot path),
the games of a referee whose lease lapsed taken over and rebuilt here (`claimed`), a
reconnecting bot sent on to the referee that took its games (`admit`), this referee's games
handed over to the others when it stops (`hand_over`), and its own stop once its lease was
revoked (`lease_lost`).

A referee that dies is noticed at once on PostgreSQL: it keeps a database session open whose
`application_name` is SESSION and its id (`keep_session`, recorded in its `servers` row), which
the database ends when the process dies or its machine's kernel closes its sockets; the
others then take its games over without waiting for its lease to lapse (storage/base.py
`session_gone`), and its bots, which reconnect at once, are neither refused for their old
connections nor kept waiting. A referee that goes silent without its session ending (its
machine's link cut, or frozen) is taken over when its lease lapses, as before. A live referee
whose session drops (ended by an administrator, a proxy between restarted) opens it again
within a second; if another referee looked meanwhile, that one took it for dead and its games
over: it then finds its lease revoked (`lease_lost`) and stops, exit status 3, for its service
manager to start it again (docs/competitions.md, "Fencing"). A restarted database ended every session
and takes nobody for dead (`session_gone`, fleet/store.py `lapsed`).

The hot path only appends to each session's log (it always did); this module slices the new
entries every FLUSH_S and hands them to the storage thread (fleet/store.py `log_actions`,
one transaction per flush, each game's batch fenced by this referee's lease). A lapsed
referee's games move whole to the live referee that claims them first (the keeper's beat, or
the first hello of one of their bots); each is rebuilt by replay of its log
(referee/resume.py) and waits, clocks stopped, for its bots: they reconnect to the same
address, and a bot that lands on another referee of the fleet is refused with
`already_connected` (the SDKs connect again on it) until it lands here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any

from maag.protocol import ErrorCode
from maag.server.fleet.store import (
    Batch,
    Claimed,
    claim_lapsed,
    has_lapsed_games,
    log_actions,
    name_session,
    release_lease,
    taken_elsewhere,
)
from maag.server.net.games import LiveGame
from maag.server.referee.resume import rebuild
from maag.server.referee.session import REPLAY_VERSION, GameSession
from maag.server.storage.backend import Database, open_database
from maag.server.storage.base import LeaseLost

if TYPE_CHECKING:
    from maag.server.net.games import Games
    from maag.server.net.keeper import StorageKeeper
    from maag.server.net.lobby import Lobby
    from maag.server.net.model import ServerConfig
    from maag.server.net.seating import Seating
    from maag.server.net.transport import Client
    from maag.server.net.watchers import Watchers
    from maag.server.storage.base import AsyncStorage

__all__ = ["Takeover", "FLUSH_S"]

LOG = logging.getLogger("maag.server.net.server")

FLUSH_S = 0.1
"""How often the running games' new actions are written: what a referee's death can cost a
game is the actions of this last moment (the seat to move is asked again)."""

SESSION = "maag-referee:"
"""The `application_name` of the session a referee keeps open, followed by its id."""
SESSION_PING_S = 1.0
"""How often that session is used (a proxy between does not close it as idle; a session
lost with the connection is made again at the next ping, tried four times as often while
the database is away)."""

_RESUME_KEYS = ("version", "game", "config", "seed", "start_state", "time_control", "policy", "tags")


class Takeover:
    """The action log, takeovers and this referee's lease (see the module)."""

    def __init__(self, config: ServerConfig, *, server_id: str, storage: AsyncStorage, keeper: StorageKeeper,
                 lobby: Lobby, seating: Seating[LiveGame], rooms: Games, watchers: Watchers,
                 stats: dict[str, int], spawn: Callable[[Coroutine[Any, Any, Any]], None],
                 violation: Callable[[Client, ErrorCode, str], None],
                 link_address: Callable[[], str | None], tasks: Callable[[], Iterable[asyncio.Task[Any]]],
                 fail: Callable[[str], None]) -> None:
        """`link_address`: where this referee takes seat links (None: it does not); `tasks`:
        the referee's tasks under way (a game being stored or started), waited for before the
        lease goes; `fail`: the referee gives up, saying why."""
        self.config, self.server_id, self.storage, self.keeper = config, server_id, storage, keeper
        self.lobby, self.seating, self.rooms, self.watchers = lobby, seating, rooms, watchers
        self.stats = stats
        self.spawn, self.violation, self.link_address = spawn, violation, link_address
        self.tasks, self.fail = tasks, fail
        self.logged: dict[str, int] = {}
        """Per running game: how many of its actions the database holds."""
        self.lost = False
        self._writing: asyncio.Future[set[int]] | None = None  # the flush under way
        self.handing: list[LiveGame] = []  # the games being handed over (our stop)
        self.session: Database | None = None  # the session kept open (keep_session)
        self.resumed: Callable[[LiveGame], None] | None = None
        """Told of each game rebuilt here (a fleet ladder's hosted seats start again: member.py)."""
        storage.fence = server_id  # every result written is fenced by our lease
        keeper.game = config.game
        store = storage.storage
        keeper.claim_lapsed = lambda sid, game: claim_lapsed(store, sid, game)
        keeper.on_claimed = self.claimed
        keeper.on_lease_lost = self.lease_lost

    # -- the action log -------------------------------------------------------------------
    async def run(self) -> None:
        """Write the running games' new actions every FLUSH_S, until cancelled."""
        while not self.lost:
            await asyncio.sleep(FLUSH_S)
            await self.flush()

    async def keep_session(self) -> None:
        """On PostgreSQL: keep a session named after this referee open, until our stop (see
        the module)."""
        db = self.storage.storage.db
        if db.DIALECT != "postgresql":
            return
        name = SESSION + self.server_id
        url = f"{db.url}{'&' if '?' in db.url else '?'}application_name={name}"
        named = away = False
        while not self.lost:
            try:
                session: Database = self.session or await asyncio.to_thread(open_database, url)
                self.session = session
                if not named:  # (recorded once the session is open: then it may end)
                    await self.storage.apply(name_session, self.server_id, name)
                    named = True
                else:  # (opened again with its name if it was lost)
                    await asyncio.to_thread(session.query, "SELECT 1")
                if away:  # back (restarted?): our lease renewed now, not at the keeper's next
                    # try, seconds later after a long outage: the others may take a referee's
                    # games a lease after the database's start (fleet/store.py `lapsed`)
                    self.keeper.wake()
                away = False
            except Exception as e:  # the database away: the lease decides meanwhile
                LOG.debug("the referee's session not kept: %s", e)
                away = True
            await asyncio.sleep(SESSION_PING_S / 4 if away else SESSION_PING_S)
        self.end_session()

    def end_session(self) -> None:
        """Close the session `keep_session` keeps: after our games were handed over (not when
        the loops stop, before: the others would take our games over as a dead referee's,
        the last of their logs not written yet), or once our lease is lost."""
        if self.session is not None:
            with contextlib.suppress(Exception):
                self.session.close()
            self.session = None

    def batches(self) -> list[Batch]:
        """The actions not yet written, per game (with its start, the first time)."""
        out: list[Batch] = []
        games = self.rooms.games
        for gid in [g for g in self.logged if g not in games]:
            del self.logged[gid]
        for gid, game in games.items():
            if game.ending and game not in self.handing:
                continue
            s = game.session
            log = s.log
            n = self.logged.get(gid)
            if n is None:
                out.append(Batch(game.db_id, 0, log[:], _resume(s), s.log_json()))
            elif len(log) > n:
                out.append(Batch(game.db_id, n, log[n:], text=s.log_json(n)))
        return out

    async def flush(self) -> None:
        if not self.keeper.ok or self.lost:
            return
        batches = self.batches()
        if not batches:
            return
        # Shielded: cancelled at our stop, the write still completes and is counted, so that
        # the last flush (hand_over) starts where the log ends.
        self._writing = asyncio.ensure_future(self._write(batches))
        try:
            refused = await asyncio.shield(self._writing)
        except Exception as e:  # the database is away: the keeper rides it out; we try again
            LOG.debug("action log not written: %s", e)
            return
        if refused and len(refused) == len(batches):
            # Every game refused: most likely our lease was revoked; the keeper's next beat
            # says for sure (and stops us).
            self.keeper.wake()

    async def _write(self, batches: list[Batch]) -> set[int]:
        """Write `batches`; the ids of the games whose batch was refused."""
        refused = set(await self.storage.apply(log_actions, self.server_id, batches))
        for b in batches:
            if b.game_id not in refused:
                self.logged[str(b.game_id)] = b.seq + len(b.entries)
        return refused

    # -- taking over ------------------------------------------------------------------------
    def claimed(self, games: list[Claimed]) -> None:
        """Rebuild the games this referee took over; they wait for their bots."""
        for c in games:
            gid = str(c.game_id)
            try:
                if c.resume is None:
                    raise ValueError("its start was never logged")
                session = rebuild(gid, c.seats, c.resume, c.actions,
                                  wait_ms=self.config.policy.disconnect_grace_ms)  # our --grace
            except Exception as e:
                LOG.warning("game %s taken over but not resumable (%s): stored as aborted", gid, e)
                self.spawn(self._store_aborted(c, str(e)))
                continue
            game = LiveGame(session, [None, None], c.seats, c.game_id, None, link_secret=c.link_secret)
            self.rooms.games[gid] = game
            self.logged[gid] = len(c.actions)
            self.stats["games_started"] += 1
            LOG.info("game %s taken over at ply %d (epoch %d): waiting for %s and %s", gid, len(c.actions),
                     c.epoch, *c.seats)
            if self.watchers:
                self.watchers.tell("start", session)
            self.rooms.after(game)  # arms its grace timer (or stores it, if the log ended it)
            if self.resumed is not None and not game.ending:
                self.resumed(game)
        for cl in list(self.lobby.clients):  # bots already here get their seats
            if cl.bot is not None and not cl.closed and not cl.pinned:
                self.rooms.reattach(cl)

    async def _store_aborted(self, c: Claimed, why: str) -> None:
        r = c.resume or {}
        replay = {"version": REPLAY_VERSION, "game": r.get("game", self.config.game),
                  "config": r.get("config", {}), "seed": r.get("seed"), "start_state": r.get("start_state"),
                  "tags": {**r.get("tags", {}), "Reason": "aborted", "Abort": f"taken over: {why}"},
                  "actions": c.actions,
                  "result": {"winner": None, "reason": "aborted", "plies": len(c.actions)}}
        try:
            await self.storage.finish_game(c.game_id, replay)
        except Exception:
            LOG.exception("game %s: could not be stored as aborted", c.game_id)

    async def admit(self, c: Client, bot: str) -> bool:
        """Before `bot`'s hello is welcomed, once its connection is counted (so the referee it
        was connected to, if dead, has lapsed by now): take over its games if their referee's
        lease has lapsed (they are played here then); False (the hello refused, to be tried
        again) if another live referee took them over or is taking them over."""
        try:
            pending = await self.storage.apply(has_lapsed_games, bot, self.config.game)
            if pending:
                await self.keeper.claim()
                # Still there: another referee is claiming them right now (its transaction
                # holds them); the bot will find them there.
                pending = await self.storage.apply(has_lapsed_games, bot, self.config.game)
            if self.link_address() is not None:
                return True  # (its seats elsewhere are carried to their host: links.find)
            other = await self.storage.apply(taken_elsewhere, self.server_id, bot, self.config.game)
        except LeaseLost as e:
            self.keeper.revoked(str(e))
            return False
        except Exception as e:  # the database is away: the hello goes on as without a fleet
            LOG.debug("%s: its games elsewhere not looked up: %s", c, e)
            return True
        if other is None and not pending:
            return True
        self.violation(c, ErrorCode.ALREADY_CONNECTED, "your games are played by another referee at this "
                      f"address since theirs failed (game {other or 'being taken over'}): connect again")
        return False

    async def hand_over(self) -> bool:
        """`_hand_over`, then our session ends (see `end_session`)."""
        try:
            return await self._hand_over()
        finally:
            self.end_session()

    async def _hand_over(self) -> bool:
        """At our stop, with peers on the database: stop our games where they are, write the
        rest of their logs, let our lease lapse (a peer takes them over at once, as after a
        crash but with nothing lost), then close their bots' connections, without
        `shutting_down` (they reconnect, to a peer; not before the lapse, or a peer would
        welcome them without their games). The games that may not be handed over
        (`_handable`) are aborted and stored first. False (nothing done) when alone or when
        the database is away: the caller aborts the games then."""
        if self.lost or not self.keeper.ok or not self.rooms.games:
            return False
        try:
            # The peers counted now, not at our last renewal: a referee that joined since (a
            # third of a lease ago at most) takes the games as well as any (a stop right
            # after a peer started aborted them all, with the peer there to take them).
            live = await self.storage.heartbeat(self.server_id)
        except LeaseLost as e:
            self.keeper.revoked(str(e))
            return False
        except Exception as e:  # the database is away: nobody could take them
            LOG.error("games not handed over (%s): aborted", e)
            return False
        self.keeper.peers = max(0, live - 1)
        if not self.keeper.peers:
            return False
        games: list[LiveGame] = []
        while True:
            for g in list(self.rooms.games.values()):
                if g.ending:
                    continue
                if not _handable(g):  # its caller waits for it here: aborted (and stored) now
                    g.session.abort("server shutdown")
                    self.rooms.after(g)
                    continue
                g.ending = True  # nothing more happens here: no action, no timer, no result
                if g.timer is not None:
                    g.timer.cancel()
                    g.timer = None
                games.append(g)
            # The games already ending are stored before our lease goes (a peer would take
            # them over, unfinished), and those starting are handed over too.
            busy = [t for t in self.tasks() if not t.done() and t is not asyncio.current_task()]
            if not busy:
                break
            await asyncio.wait(busy)
        if self._writing is not None:
            await asyncio.wait([self._writing])
        self.handing = games
        try:
            refused = await self._write(self.batches())
        except Exception as e:
            LOG.error("games not handed over (%s): aborted", e)
            refused = {g.db_id for g in games}
        self.handing = []
        for g in games:
            if g.db_id in refused:  # (its log is not whole: nobody may resume it)
                g.ending = False
                g.session.abort("server shutdown")
                self.rooms.after(g)  # stored as aborted while the lease is still ours
            else:
                self.rooms.games.pop(g.session.game_id, None)
                if g.request is not None and g.request.future is not None:  # (handover: followed elsewhere)
                    g.request.future.cancel()
        busy = [t for t in self.tasks() if not t.done() and t is not asyncio.current_task()]
        if busy:
            await asyncio.wait(busy)
        if len(refused) < len(games):
            try:
                await self.storage.apply(release_lease, self.server_id)
                self.keeper.handed_over = True
            except Exception as e:  # they will be taken over when our lease lapses
                LOG.error("lease not given up (%s): its games wait for it to lapse", e)
        for cl in {c for g in games for c in g.clients if c is not None and not c.closed}:
            self.seating.unseat_all(cl)
            cl.close()
        LOG.warning("%d game(s) handed over to the other referees", len(games) - len(refused))
        return True

    # -- our own lease ----------------------------------------------------------------------
    def lease_lost(self, why: str) -> None:
        """Our lease was revoked and our games taken over: drop every game without a word to
        its bots (no result of ours is stored, so none is announced), close every connection
        (the bots reconnect, to the referee that has their games now) and stop the server."""
        if self.lost:
            return
        self.lost = True
        self.lobby.stop()
        for game in list(self.rooms.games.values()):
            game.ending = True
            if game.timer is not None:
                game.timer.cancel()
                game.timer = None
        dropped = len(self.rooms.games)
        self.rooms.games.clear()
        for cl in list(self.lobby.clients):
            self.seating.unseat_all(cl)
            with contextlib.suppress(Exception):
                cl.close()
        LOG.critical("lease lost (%s): %d game(s) dropped, every connection closed", why, dropped)
        self.fail(f"lease lost ({why}): another referee of the fleet took this one's games over, its lease "
                  "having lapsed or its database session ended; they go on there. Start it again: it joins "
                  "the fleet as a new member")


def _handable(game: LiveGame) -> bool:
    """May `game` be handed over at our stop? Yes for a fleet ladder's game (its request says
    `handover`) and a game taken over here (no request): their hosted seats, if any, end here
    and start again as fresh processes on the member taking them over (`resumed`,
    fleet/member.py), as after a member's loss. Not when something here waits for its summary
    (a match, a tournament), nor when a seat is another hosted process (it cannot reconnect
    elsewhere): those are aborted as before."""
    req = game.request
    if req is None or req.handover:
        return True
    if req.future is not None or req.clients is not None:
        return False
    return not any(c is not None and c.pinned and not c.link for c in game.clients)


def _resume(session: GameSession) -> dict[str, Any]:
    """What a game was started with: the header of its replay, which `rebuild` starts from."""
    r = session.replay()
    return {k: r[k] for k in _RESUME_KEYS}
