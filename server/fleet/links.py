"""Seat links: a bot connected to one referee of a fleet plays a game hosted by another.

The referee the bot is connected to (here called the *member*) opens a TCP connection to
the host's link listener (its address is in the host's `servers` row) and speaks the bot
protocol there on the bot's behalf, for that one game, relaying the game's messages both
ways (decoded and encoded again: the bot and the link need not share a framing). It logs in
with a link token, never the bot's: `link:g<game>:<seat>:<secret>:<rtt µs>` for a running
game (the secret is made per game by its host and kept in the game's row, which only the
fleet's referees read), `link:a<assignment>:<secret>:<rtt µs>` for a game a fleet scheduler
has just paired (fleet/member.py; the host waits for this link before the game starts). The
host treats the link as the seat's connection for that game only (pinned: never paired, not
counted among the bot's connections) and adds the round trip the member measured to the bot
to the link's own (TCP_INFO): the seat's network time, not its thinking time. The member
reads the bot's round trip again at most every RTT_READ_S and, when it has changed by more
than RTT_CHANGE_US and a fifth, tells the host before the bot's next message with a `ping`
whose id is `rtt:<µs>` (the host answers a link's pings with nothing; a bot's own pings
never travel a link, its referee answers them).

A link that drops (the host died or handed its games over) is looked up again every
RELINK_S while its bot is still here and the game still runs: the referee that took the
game over is found in the database and linked, and the bot never notices but for the wait.
A bot that reconnects to any referee of the fleet finds its games the same way (`find`).

A host that goes silent closes nothing: its machine's link cut, packets dropped, or its
machine frozen. Both ends of a link therefore watch the other (`keep_watch`: TCP keepalive
probes after a third of a lease of silence, and TCP_USER_TIMEOUT, so that data unacknowledged
for a lease drops the connection), and the member looks at the games it links every
CHECK_S (`run`): one whose row in the database names another host (it was taken over; a
frozen host's kernel still acknowledges, so no timeout would tell) is linked there anew. At
the host, a link for a seat that an older link holds takes the seat (the bot is behind the
newer one: the older one's member lost it, or is lost).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import secrets
import socket
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from maag.protocol import (
    FATAL,
    Act,
    Connection,
    ConnectionClosed,
    Error,
    ErrorCode,
    GameOver,
    GameStart,
    Greeting,
    Hello,
    Message,
    Ping,
    Pong,
    ProtocolError,
    Resign,
    Role,
    Turn,
    Welcome,
)
from maag.server.fleet.store import game_running, has_lapsed_games, link_hosts, seats_elsewhere, set_link
from maag.server.net.model import SERVER_NAME
from maag.server.net.rtt import RTT_READ_S  # (how often at most a linked bot's round trip is read)

if TYPE_CHECKING:
    from maag.server.net.games import Games, LiveGame
    from maag.server.net.lobby import Lobby
    from maag.server.net.model import ServerConfig
    from maag.server.net.seating import Seating
    from maag.server.net.transport import Client
    from maag.server.storage.base import AsyncStorage

__all__ = ["Links", "SeatLink", "RELINK_S", "LINK_WAIT_S", "CHECK_S", "new_secret", "keep_watch"]

LOG = logging.getLogger("maag.server.net.server")

RELINK_S = 0.5  # how often a lost link's game is looked up again (its new host, once taken over)
LINK_WAIT_S = 10.0  # how long a host waits for the link of a game a scheduler paired
RTT_CHANGE_US = 1000  # a change the host is told of: more than this and a fifth (it jitters)
CHECK_S = 1.0  # how often a member looks up the hosts of the games it links (taken over?)


def keep_watch(transport: asyncio.BaseTransport | None, lease_s: float) -> None:
    """Drop `transport`'s connection once its peer has been silent for about a lease: TCP
    keepalive probes after a third of a lease without traffic (three, a third of a lease
    apart), and TCP_USER_TIMEOUT (data or probes unacknowledged for a lease). The takeover
    of a silent host's games waits for its lease to lapse; its links go about then."""
    sock = None if transport is None else transport.get_extra_info("socket")
    if sock is None:
        return
    third = max(1, int(lease_s / 3))
    with contextlib.suppress(OSError, AttributeError):  # (a platform without these options)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, third)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, third)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 3)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, max(1000, int(lease_s * 1000)))


def new_secret() -> str:
    return secrets.token_urlsafe(18)  # (per game: its links' and the link tokens' secret)


class SeatLink(asyncio.Protocol):
    """The member's end of one link: the bot's connection `client` here, the host there."""

    def __init__(self, links: Links, client: Client, token: str, *, game_id: str | None,
                 reserved: bool = False, address: str = "") -> None:
        self.links = links
        self.address = address  # the host's link address
        self.reserved = reserved  # holds one of the bot's slots until its game_start (member.py)
        self.client = client
        self.token = token
        self.game_id = game_id  # known from the start for a running game; else from game_start
        self.conn = Connection(Role.CLIENT)
        self.transport: asyncio.Transport | None = None
        self.welcomed: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.over = False  # game_over relayed: the link's job is done
        self.refused: str | None = None  # why the host refused the link
        self.rtt_us = int(token.rsplit(":", 1)[1])  # the bot's round trip the host was last told
        self.rtt_at = time.monotonic()  # when it was last read
        self.lost = False  # closed (connection_lost)

    def __repr__(self) -> str:
        return f"<link {self.client.bot} game {self.game_id or '?'}>"

    # -- towards the host ---------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        keep_watch(transport, self.links.config.lease_s)
        c = self.client
        self._write(Greeting(encoding="msgpack"))
        self._write(Hello(name=c.display or str(c.bot), token=self.token, games=(self.links.game,),
                          concurrency=1, want_legal=c.want_legal, want_groups=c.want_groups or None,
                          events="turn" if c.turn_events else None))

    def _write(self, m: Message | Greeting) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(self.conn.send(m))

    def forward(self, m: Act | Turn | Resign) -> None:
        """A message of the bot for this game, on to the host (after its round trip, if changed)."""
        try:
            if time.monotonic() - self.rtt_at >= RTT_READ_S:
                self.rtt_at = time.monotonic()
                self.client.forget_rtt()  # (afresh: the connection's own reads need not line up)
                rtt = int(self.client.rtt_ms() * 1000)
                if abs(rtt - self.rtt_us) > max(RTT_CHANGE_US, self.rtt_us // 5):
                    self._write(Ping(id=f"rtt:{rtt}"))
                    self.rtt_us = rtt
            self._write(m)
        except ProtocolError as e:  # (the link is closing: the bot's seat is disconnected there)
            LOG.debug("%s: %s not forwarded: %s", self, m.TYPE, e)

    # -- from the host --------------------------------------------------------------------
    def data_received(self, data: bytes) -> None:
        c = self.client
        try:
            for ev in self.conn.events(data):
                if isinstance(ev, ConnectionClosed):
                    break
                if isinstance(ev, Welcome):
                    if not self.welcomed.done():
                        self.welcomed.set_result(True)
                    continue
                if not isinstance(ev, Message) or isinstance(ev, Pong):  # (an older host answers pings)
                    continue
                if isinstance(ev, Error) and getattr(ev, "game_id", None) is None:
                    self.refused = f"{ev.code}: {ev.message}"
                    if ev.code in FATAL or not self.welcomed.done():
                        self.close()
                        break
                    continue
                if isinstance(ev, GameStart) and self.game_id is None:
                    self.game_id = ev.game_id
                    self.links.started(self)
                c.queue(ev)
                if isinstance(ev, GameOver):
                    self.over = True
            c.flush()
        except ProtocolError as e:
            LOG.warning("%s: the host broke the protocol (%s); closing the link", self, e)
            self.close()
        if self.over:
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        if not self.welcomed.done():
            self.welcomed.set_result(False)
        self.links.lost(self)

    def close(self, *, abort: bool = False) -> None:
        """Close the link (`abort`: at once, what is unsent dropped: its host is silent)."""
        if self.transport is not None:
            with contextlib.suppress(Exception):
                if abort:
                    self.transport.abort()
                else:
                    self.transport.close()


class Links:
    """Both ends of the fleet's seat links for one referee (see the module)."""

    def __init__(self, config: ServerConfig, *, server_id: str, storage: AsyncStorage, lobby: Lobby,
                 seating: Seating[LiveGame], rooms: Games, spawn: Callable[[Coroutine[Any, Any, Any]], None],
                 stopping: Callable[[], bool], violation: Callable[[Client, ErrorCode, str], None]) -> None:
        """`rooms`: the games played here (a link takes its seat in one); `violation`: an
        error sent to a connection."""
        self.config, self.server_id, self.storage, self.lobby = config, server_id, storage, lobby
        self.seating, self.rooms = seating, rooms
        self.spawn, self.stopping, self.violation = spawn, stopping, violation
        self.game = config.game
        self.address: str | None = None  # where this referee takes links (host:port), once listening
        self.expected: dict[int, tuple[str, int, asyncio.Future[str]]] = {}
        """assignment -> (secret, seat, the hello future the game's request waits for)."""
        self.awaited: dict[asyncio.Future[str], str] = {}
        """A pin -> its seat's bot, when the link may come before the game's request (a hosted
        opponent's process is still starting: fleet/member.py)."""
        self._relinking: set[tuple[str, int]] = set()  # (bot, game) looked up again, for lost links
        self.open_links: set[SeatLink] = set()  # this member's links, welcomed and not lost
        self._listener: asyncio.base_events.Server | None = None

    # -- the listener -------------------------------------------------------------------
    async def listen(self, factory: Callable[[], asyncio.Protocol]) -> None:
        """Listen for links (a free port) and publish the address in this referee's row."""
        cfg = self.config
        if not cfg.links:
            return
        host = cfg.link_host or cfg.host
        self._listener = await asyncio.get_running_loop().create_server(factory, host, 0)
        port = self._listener.sockets[0].getsockname()[1]
        shown = cfg.link_address or (socket.getfqdn() if host in ("", "0.0.0.0", "::") else host)
        address = f"[{shown}]:{port}" if ":" in shown else f"{shown}:{port}"
        try:
            await self.storage.apply(set_link, self.server_id, address)
        except Exception as e:  # no links then: the fleet's others do not know where we are
            LOG.warning("link address not published (%s): seats are not carried here", e)
            return
        self.address = address

    def stop(self) -> None:
        if self._listener is not None:
            self._listener.close()

    # -- the host's end -----------------------------------------------------------------
    def hello(self, c: Client, h: Hello) -> None:
        """A hello on the link listener: a link for a seat of a game here, or refused."""
        why = self.accept(c, h)
        name = self.bot_of(c) if why is None else None
        if name is None:
            self.violation(c, ErrorCode.AUTH_FAILED, f"link refused: {why or 'no such seat'}")
            return
        c.bot, c.display = name, h.name
        self.seating.join(c, concurrency=1, max_games=1)  # its one game
        cfg = self.config
        c.queue(Welcome(bot=name, server=SERVER_NAME, max_frame=cfg.max_frame, max_rate=cfg.max_rate))
        c.flush()
        keep_watch(c.transport, cfg.lease_s)  # (its member may go silent: then the seat is free again)
        LOG.info("%s: link for %s", c, name)
        self.welcomed(c)
        self.lobby.pair()

    def pinged(self, c: Client, m: Ping) -> None:
        """A link's ping: its bot's round trip to the member, `rtt:<µs>`; not answered."""
        if isinstance(m.id, str) and m.id.startswith("rtt:") and m.id[4:].isdigit():
            c.extra_rtt_ms = min(int(m.id[4:]), 10_000_000) / 1000.0

    def expect(self, assignment: int, secret: str, seat: int, bot: str | None = None) -> asyncio.Future[str]:
        """A link for `seat` of a game being paired (fleet/member.py): the request's pin
        (`bot`: the seat's, for a link that comes before the request; cancel the pin if it
        never comes)."""
        fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        fut.add_done_callback(lambda f: f.cancelled() or f.exception())
        self.expected[assignment] = (secret, seat, fut)
        if bot is not None:
            self.awaited[fut] = bot
            fut.add_done_callback(lambda f: self.awaited.pop(f, None))
        return fut

    def accept(self, c: Client, h: Hello) -> str | None:
        """A link's hello on the link listener: None if it is accepted (then `c` holds the
        seat), else why not (answered `auth_failed`)."""
        parts = h.token.split(":")
        if len(parts) != 4 or parts[0] != "link" or len(parts[1]) < 2 or not parts[3].isdigit():
            return "not a link token"
        kind, ref, secret, rtt_us = parts[1][0], parts[1][1:], parts[2], int(parts[3])
        c.extra_rtt_ms = min(rtt_us, 10_000_000) / 1000.0
        c.pinned = True  # one game, never paired, not counted among the bot's connections
        c.link = True
        c.want_legal, c.want_groups = h.want_legal, bool(h.want_groups)
        c.turn_events = h.turn_events
        if kind == "a" and ref.isdigit():
            entry = self.expected.get(int(ref))
            if entry is None or not hmac.compare_digest(entry[0], secret):
                return "unknown link"
            del self.expected[int(ref)]
            c.hello_future = entry[2]
            return None
        seat_s, _, gid = ref.partition(".")
        game = self.rooms.games.get(gid)
        if kind != "g" or not seat_s.isdigit() or game is None or game.ending or game.link_secret is None:
            return "no such game here"
        seat = int(seat_s)
        if seat not in (0, 1) or not hmac.compare_digest(game.link_secret, secret):
            return "unknown link"
        held = game.clients[seat]
        if held is not None and not held.closing and not held.link:
            return f"seat {seat + 1} of game {gid} is connected already"
        c.link_seat = (gid, seat)
        return None

    def welcomed(self, c: Client) -> None:
        """After the link's welcome: its seat (a running game's), or the waiting request's pin."""
        if c.hello_future is not None:
            if not c.hello_future.done():
                c.hello_future.set_result(str(c.bot))
            return
        if c.link_seat is not None:
            gid, seat = c.link_seat
            game = self.rooms.games.get(gid)
            if game is None or game.ending:
                return
            held = game.clients[seat]
            if held is not None and held is not c and held.link:
                # An older link of this seat: its member lost the bot (the bot is behind this
                # one) or is silent itself. It goes; the seat is this link's.
                LOG.warning("game %s: seat %d's link %s replaced by %s", gid, seat + 1, held, c)
                self.rooms.leave(held)
                held.close()
            if game.clients[seat] is None:
                self.rooms.seat_back(c, game, seat)

    def bot_of(self, c: Client) -> str | None:
        """The bot a link's hello speaks for (its seat's, or the paired game's)."""
        if c.link_seat is not None:
            game = self.rooms.games.get(c.link_seat[0])
            return None if game is None else game.bots[c.link_seat[1]]
        for req in self.lobby.requests:
            if req.clients is not None and c.hello_future in req.clients:
                return req.seats[req.clients.index(c.hello_future)]
        return self.awaited.get(c.hello_future) if c.hello_future is not None else None

    # -- the member's end ---------------------------------------------------------------
    async def open(self, c: Client, address: str, token: str, *, game_id: str | None,
                   reserved: bool = False) -> SeatLink | None:
        """Link `c`'s seat to the host at `address`; the link once the host welcomed it.
        `reserved`: the caller took one of `c`'s slots for it (released with the link, or
        turned into the game's own once its game_start comes)."""
        host, _, port = address.rpartition(":")
        host = host.strip("[]")
        loop = asyncio.get_running_loop()
        link = SeatLink(self, c, token, game_id=game_id, reserved=reserved, address=address)
        if game_id is not None:
            self.seating.add_link(c, game_id, link)
        try:
            await asyncio.wait_for(loop.create_connection(lambda: link, host, int(port)), 5.0)
            ok = await asyncio.wait_for(asyncio.shield(link.welcomed), 5.0)
        except (OSError, asyncio.TimeoutError, ValueError) as e:
            link.refused = link.refused or str(e) or type(e).__name__
            ok = False
        if not ok:
            link.close()
            self._release(link)
            if game_id is not None:
                self.seating.drop_link(c, game_id, link)
            LOG.info("%s: link to %s refused: %s", c, address, link.refused)
            return None
        LOG.info("%s: seat linked to %s (game %s)", c, address, game_id or "being paired")
        if not link.lost:
            self.open_links.add(link)
        return link

    def token(self, c: Client, ref: str, secret: str) -> str:
        return f"link:{ref}:{secret}:{int(c.rtt_ms() * 1000)}"

    async def find(self, c: Client, *, patient: bool = False) -> None:
        """Link every seat of `c`'s bot in games hosted by the fleet's other referees (a bot
        that reconnected here, or whose link was lost and whose game was taken over). With
        `patient` (a bot's hello), while some of its games are being taken over (their host's
        lease has lapsed), look again every RELINK_S for up to a lease."""
        if c.bot is None or c.closing or c.pinned or c.token_hash is None:
            return  # (a token of this referee only: its bot is not the one playing elsewhere)
        end = time.monotonic() + self.config.lease_s
        try:
            while True:
                # In this order: a takeover committed between the two reads is seen by the second.
                lapsed = patient and await self.storage.apply(has_lapsed_games, c.bot, self.game)
                seats = await self.storage.apply(seats_elsewhere, self.server_id, c.bot, self.game)
                if not lapsed or time.monotonic() > end or c.closing or self.stopping():
                    break
                await asyncio.sleep(RELINK_S)
        except Exception as e:
            LOG.debug("%s: its games elsewhere not looked up: %s", c, e)
            return
        LOG.debug("%s: its seats elsewhere: %s", c, seats)
        for s in seats:
            gid = str(s.game_id)
            if self.seating.holds(c, gid) or c.closing:
                continue
            token = self.token(c, f"g{s.seat}.{gid}", s.secret)
            if await self.open(c, s.address, token, game_id=gid) is None:
                # Its host just died (a takeover is due), or still holds the bot's old connection:
                # looked up again until the game is linked, played here, or over.
                self._watch(c, s.game_id)

    def started(self, link: SeatLink) -> None:
        """A paired game's `game_start` came through `link`: it holds one of the bot's slots."""
        assert link.game_id is not None
        self.seating.add_link(link.client, link.game_id, link)
        self._release(link)

    def _release(self, link: SeatLink) -> None:
        if link.reserved:
            link.reserved = False
            self.seating.release(link.client)

    def lost(self, link: SeatLink) -> None:
        """A link closed: its game is over (the slot is free again), or its host is gone (the
        game is looked up again until it runs elsewhere or is over)."""
        c = link.client
        gid = link.game_id
        self.open_links.discard(link)
        self._release(link)
        if gid is not None:
            self.seating.drop_link(c, gid, link, now=time.monotonic())
        if link.over or gid is None or c.closing or self.stopping():
            self.lobby.pair()
            return
        self._watch(c, int(gid))

    def _watch(self, c: Client, gid: int) -> None:
        """Look game `gid` up again every RELINK_S for `c` (once per bot and game)."""
        key = (str(c.bot), gid)
        if key not in self._relinking and not c.closing and not self.stopping():
            self._relinking.add(key)
            self.spawn(self._relink(c, gid, key))

    async def _relink(self, c: Client, gid: int, key: tuple[str, int]) -> None:
        try:
            while not c.closing and not self.stopping() and not self.seating.holds(c, str(gid)):
                await asyncio.sleep(RELINK_S)
                try:
                    if not await self.storage.apply(game_running, gid):
                        return
                except Exception:
                    continue
                await self.find(c)
        finally:
            self._relinking.discard(key)

    async def run(self) -> None:
        """Every CHECK_S, the games linked from here whose row names another host now (taken
        over from a silent host): their links close and are made again to the new host."""
        while not self.stopping():
            await asyncio.sleep(CHECK_S)
            links = [k for k in self.open_links if k.game_id is not None and not k.over and not k.lost]
            if not links:
                continue
            try:
                hosts = await self.storage.apply(link_hosts, sorted({int(k.game_id or 0) for k in links}))
            except Exception as e:  # the database away: the keepalives still watch the hosts
                LOG.debug("linked games' hosts not looked up: %s", e)
                continue
            for k in links:
                now = hosts.get(int(k.game_id or 0))
                if now is not None and now != k.address and not k.over:
                    LOG.warning("%s: its game moved to %s (taken over): linked there anew", k, now)
                    k.close(abort=True)  # (lost: looked up again and linked to its new host)

    def close_all(self, c: Client) -> None:
        """`c` is gone: its links close (their seats are disconnected at their hosts)."""
        for link in self.seating.links(c):
            link.close()
        self.seating.drop_links(c)
